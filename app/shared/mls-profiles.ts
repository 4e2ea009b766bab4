// MLS profiles: what each set of rules asks of an altered listing photo, as data
// (docs/decisions/0170-mls-profiles.md; the rules as gathered in November 2026 are summarised in the project's
// shared spec, mls-rules.md). A profile decides whether a label goes on the photo and what it says, the caption
// of each kind of result, a listing-remarks line, where the original goes, which kinds may be published, and
// which of its rules we cannot check. Every export (the single download for MLS, the listing pack, the public
// API's download) reads the listing's profile; nothing about a rule is a code path of its own.
// Isomorphic: the settings page and the listing form list these, the server applies them.

/** The kinds of result that are disclosed alterations and may ever be published as staging. */
export const DISCLOSED_KINDS = ["stage", "sky", "removal"] as const;
export type DisclosedKind = (typeof DISCLOSED_KINDS)[number];

export const KIND_NAMES: Record<DisclosedKind, string> = {
  stage: "Virtual staging",
  sky: "Sky replacement",
  removal: "Furniture removal",
};

/**
 * Where the unaltered original goes in the listing: immediately before or after its altered photo, adjacent in
 * either order ("beside": the pack puts the original first), or not in the photos at all but behind a link.
 */
export type Placement = "beside" | "before" | "after" | "link";

export const PLACEMENT_NAMES: Record<Placement, string> = {
  beside: "Next to its altered photo (before or after)",
  before: "Immediately before its altered photo",
  after: "Immediately after its altered photo",
  link: "By link only (the original page)",
};

export interface MlsProfile {
  id: string;
  name: string;
  /** The rule it follows and its date: when it came into force, or when we read it. */
  source: { rule: string; date: string; dateMeaning: "in force since" | "as read in" };
  /**
   * A label burned into the photo, or null when the rule forbids anything on the photo. `statement` is its first
   * line per kind (the account may reword it); `originalLine` says where the original is ({link} is the short link,
   * without https://); `qr` adds a QR code of the original page (the account may switch it off when the line stays).
   */
  label: { statement: Record<DisclosedKind, string>; originalLine: string | null; qr: boolean } | null;
  /** The photo's caption (MLS photo description) per kind; {link} is the original page's full address. */
  captions: Record<DisclosedKind, string>;
  /** A line the listing's public remarks must carry, or null. */
  remarks: string | null;
  original: Placement;
  /** The kinds this rule lets a listing publish; any other result is left out of every export. */
  publishable: readonly DisclosedKind[];
  /** What the rule asks that we cannot check, said wherever the profile is shown and in the pack's manifest. */
  unchecked: readonly string[];
}

// Wording shared by the California-area profiles: says the photo was altered, how, and where the original is.
const CA_STATEMENT: Record<DisclosedKind, string> = {
  stage: "Virtually staged: digitally altered photo",
  sky: "Digitally altered photo: sky replaced",
  removal: "Digitally altered photo: furniture removed",
};
const CA_ORIGINAL_LINE = "Unaltered original: {link}";
const CA_CAPTIONS: Record<DisclosedKind, string> = {
  stage: "Virtually staged (digitally altered). Unaltered original: {link}",
  sky: "Digitally altered: sky replaced. Unaltered original: {link}",
  removal: "Digitally altered: furniture removed. Unaltered original: {link}",
};
const ALL: readonly DisclosedKind[] = DISCLOSED_KINDS;
const LAW = "California Business and Professions Code 10140.8 (AB 723)";
const PUBLISH_WHERE_SEEN =
  "The statement must stay on or next to the photo wherever it is advertised (print, portals, social media): we cannot see where you publish.";

export const MLS_PROFILES: readonly MlsProfile[] = [
  {
    id: "california",
    name: "California (AB 723)",
    source: { rule: LAW, date: "2026-01-01", dateMeaning: "in force since" },
    label: { statement: CA_STATEMENT, originalLine: CA_ORIGINAL_LINE, qr: true },
    captions: CA_CAPTIONS,
    remarks: null,
    original: "link",
    publishable: ALL,
    unchecked: [
      PUBLISH_WHERE_SEEN,
      "The original page must stay reachable while the listing advertises: keep the listing's status current.",
    ],
  },
  {
    id: "crmls",
    name: "CRMLS (California Regional MLS)",
    source: {
      rule: `CRMLS Rules and Regulations 11.5.2, with ${LAW}`,
      date: "2026-01-01",
      dateMeaning: "in force since",
    },
    label: null,
    captions: {
      stage: "Virtually Staged",
      sky: "Digitally Altered: sky replaced",
      removal: "Digitally Altered: furniture removed",
    },
    remarks: null,
    original: "beside",
    publishable: ALL,
    unchecked: [
      "Upload the photos in the pack's order: each original immediately before or after its altered photo.",
      "Wall colour, flooring, cabinets and landscaping must not be altered: the structure check looks at walls, windows and doors, not at materials.",
    ],
  },
  {
    id: "sdmls",
    name: "SDMLS (San Diego)",
    source: { rule: "SDMLS Rules and Regulations 7.4.3", date: "2026-11", dateMeaning: "as read in" },
    label: null,
    captions: {
      stage: "Digitally Altered (virtually staged). Original: {link}",
      sky: "Digitally Altered (sky replaced). Original: {link}",
      removal: "Digitally Altered (furniture removed). Original: {link}",
    },
    remarks: null,
    original: "link",
    publishable: ALL,
    unchecked: ["No watermark or text of any kind may be added to a photo, your own branding included."],
  },
  {
    id: "bay-east",
    name: "Bay East",
    source: { rule: `Bay East Rules and Regulations 11.5.2, with ${LAW}`, date: "2026-11", dateMeaning: "as read in" },
    label: null,
    captions: {
      stage: "Virtually Staged",
      sky: "Digitally Altered: sky replaced",
      removal: "Digitally Altered: furniture removed",
    },
    remarks: null,
    original: "after",
    publishable: ALL,
    unchecked: ["Upload the photos in the pack's order: each original immediately after its altered photo."],
  },
  {
    id: "metrolist",
    name: "MetroList (Sacramento)",
    source: { rule: `MetroList Rules and Regulations 11.6.1, with ${LAW}`, date: "2026-11", dateMeaning: "as read in" },
    label: { statement: CA_STATEMENT, originalLine: CA_ORIGINAL_LINE, qr: true },
    captions: CA_CAPTIONS,
    remarks: null,
    original: "link",
    publishable: ALL,
    unchecked: ["MetroList offers its own watermark tool: do not label a photo twice.", PUBLISH_WHERE_SEEN],
  },
  {
    id: "stellar",
    name: "Stellar MLS (Florida)",
    source: { rule: "Stellar MLS Rules and Regulations 04.04", date: "2026-11", dateMeaning: "as read in" },
    label: null,
    captions: {
      stage: "Virtually staged",
      sky: "Virtually staged: sky replaced",
      removal: "Virtually staged: furniture removed",
    },
    remarks: "One or more photo(s) was virtually staged.",
    original: "link",
    publishable: ALL,
    unchecked: [
      "Tick the virtually-staged checkbox when you enter the listing.",
      "The public remarks must begin with the remarks line.",
    ],
  },
  {
    id: "bright",
    name: "Bright MLS",
    source: {
      rule: "Bright MLS Rules and Regulations, listing photographs",
      date: "2026-11",
      dateMeaning: "as read in",
    },
    label: null,
    captions: {
      stage: "Virtually Staged",
      sky: "Virtually Staged: sky replaced",
      removal: "Virtually Staged: furniture removed",
    },
    remarks: null,
    original: "link",
    publishable: ALL,
    unchecked: ["Nothing may be added to a photo, your own branding included."],
  },
  {
    id: "mls-now",
    name: "MLS Now (Ohio)",
    source: { rule: "MLS Now Rules and Regulations, photographs", date: "2026-11", dateMeaning: "as read in" },
    label: null,
    captions: {
      stage: "Virtually staged (digitally altered)",
      sky: "Digitally altered: sky replaced",
      removal: "Digitally altered: furniture removed",
    },
    remarks: null,
    original: "link",
    publishable: ALL,
    unchecked: [
      "The first photo must be an unaltered exterior.",
      "A sky may be replaced only when the view is not materially changed.",
      "No watermark or QR code on a photo; structural edits are prohibited.",
    ],
  },
  {
    id: "link-only",
    name: "Link only, nothing on the photo",
    source: {
      rule: "Generic: disclosure in the caption with a link to the original",
      date: "2026-11",
      dateMeaning: "as read in",
    },
    label: null,
    captions: {
      stage: "Virtually staged (digitally altered). Unaltered original: {link}",
      sky: "Digitally altered: sky replaced. Unaltered original: {link}",
      removal: "Digitally altered: furniture removed. Unaltered original: {link}",
    },
    remarks: null,
    original: "link",
    publishable: ALL,
    unchecked: [
      "Check your own MLS's rules: this profile only keeps the photo clean and puts the disclosure and link in the caption.",
    ],
  },
];

export const MLS_PROFILE_IDS = MLS_PROFILES.map((p) => p.id);
export const DEFAULT_PROFILE_ID = "california";

export function profileById(id: string | null | undefined): MlsProfile | undefined {
  return MLS_PROFILES.find((p) => p.id === id);
}

/** The profile a stored id names; one no longer shipped reads as the default rather than failing an export. */
export function profileOrDefault(id: string | null | undefined): MlsProfile {
  return profileById(id) ?? profileById(DEFAULT_PROFILE_ID)!;
}

export function isDisclosedKind(kind: string): kind is DisclosedKind {
  return (DISCLOSED_KINDS as readonly string[]).includes(kind);
}

/** "in force since 2026-01-01" / "as read in 2026-11". */
export function sourceLine(p: MlsProfile): string {
  return `${p.source.rule}, ${p.source.dateMeaning} ${p.source.date}`;
}

/** The page address without its scheme, as the label prints it. */
export function shortLink(url: string): string {
  return url.replace(/^https?:\/\//, "");
}

/** A template with the original page's address put in ({link}); null when it needs one and there is none. */
export function fillLink(template: string, url: string | null, short = false): string | null {
  if (!template.includes("{link}")) return template;
  if (url === null) return null;
  return template.replaceAll("{link}", short ? shortLink(url) : url);
}

/** Whether exports under this profile need a live original page: a label or a caption gives its address. */
export function needsOriginalPage(p: MlsProfile): boolean {
  if (p.label && (p.label.qr || p.label.originalLine?.includes("{link}"))) return true;
  return Object.values(p.captions).some((c) => c.includes("{link}"));
}

// ---- listing status ----
// In a module of its own (app/shared/listing-status.ts): the dashboard's listing panel needs these without the
// profiles' data (issue 44: /dashboard's JavaScript).
export {
  advertises,
  CLOSE_DAYS_DEFAULT,
  CLOSE_DAYS_MAX,
  LISTING_STATUS_NAMES,
  LISTING_STATUSES,
  type ListingStatus,
} from "./listing-status";

/** Why an original page must stay up while its listing advertises. */
export const LAW_SENTENCE =
  "California law (Business and Professions Code 10140.8) requires a public page with the unaltered original for as long as an altered photo advertises the property: closing it now can break the law for you.";

/** The warning before anything closes an original page of a listing that still advertises. */
export const ADVERTISING_WARNING = `This listing is still advertised (active or pending). ${LAW_SENTENCE} Mark the listing sold first (its pages then close by themselves after the days you choose), or confirm to close it anyway.`;
