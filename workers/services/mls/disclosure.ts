import type { Database } from "@db/client";
import { type Folder, type PhotoVersion, teams } from "@db/schema";
import type { LabelSpec } from "@workers/lib/label/render";
import { eq } from "drizzle-orm";
import { type LabelDefaults, statesAlteration } from "~/shared/label-options";
import {
  type DisclosedKind,
  fillLink,
  isDisclosedKind,
  KIND_NAMES,
  type MlsProfile,
  profileById,
  profileOrDefault,
} from "~/shared/mls-profiles";
import { FLAGGED_NOT_CONFIRMED, mlsRefusal } from "~/shared/version-view";
import { getLabelDefaults } from "./labels";

// What a listing's MLS profile makes of one version on its way out of the product
// (docs/decisions/0170-mls-profiles.md): whether it may be published at all, the label burned into it (or none),
// and its caption. The single download for MLS, the listing pack and the public API's download all ask here, so
// they cannot disagree.

export interface Disclosure {
  profile: MlsProfile;
  /** The account's settings: the label's look, and its own wording of the statement. */
  settings: LabelDefaults;
  /** Whether the listing chose the profile, or it is the account's. */
  from: "listing" | "account";
}

/**
 * The profile a listing follows: its own, else the account's (California for a new account). A team listing's is the
 * same whoever asks and whoever uploaded the photo: its own, else the team's default, else the account of the member
 * who made the listing, with that account's label (docs/decisions/0341-a-team-listing-has-one-disclosure.md).
 * `userId`: the photo's owner, for a photo in a personal folder or in none.
 */
export async function disclosureFor(
  db: Database,
  userId: string,
  folder: Pick<Folder, "mlsProfile" | "teamId" | "userId"> | null | undefined,
): Promise<Disclosure> {
  if (!folder?.teamId) return disclosureOf(await getLabelDefaults(db, userId), folder?.mlsProfile ?? null);
  const [settings, team] = await Promise.all([
    getLabelDefaults(db, folder.userId),
    db.select({ profile: teams.defaultMlsProfile }).from(teams).where(eq(teams.id, folder.teamId)).get(),
  ]);
  return disclosureOf({ ...settings, profile: team?.profile ?? settings.profile }, folder.mlsProfile);
}

export function disclosureOf(settings: LabelDefaults, listingProfile: string | null): Disclosure {
  const own = profileById(listingProfile);
  return own
    ? { profile: own, settings, from: "listing" }
    : { profile: profileOrDefault(settings.profile), settings, from: "account" };
}

/**
 * Whether a version may go out, and if not, why. `code` "conflict": its owner returned it ("This result changed the
 * room"), or the structure check refused the result, or it was kept anyway, or it is flagged and its owner has not
 * confirmed they checked it (said in mlsRefusal's words; `unconfirmed` for that last one, which the owner can lift);
 * "forbidden": the profile or the product never lets it out.
 */
export type Exportable =
  | { ok: true; kind: DisclosedKind }
  | { ok: false; reason: string; code: "conflict" | "forbidden"; unconfirmed?: true };

/** Whether a version may leave the product under this profile, and if not, why (said in the pack's manifest). */
export function exportable(
  d: Disclosure,
  // Left out, the confirmation counts as not given (a flagged result stays out); the return must be read.
  v: Pick<PhotoVersion, "kind" | "structureVerdict" | "structureReturnedAt"> & { structureConfirmedAt?: number | null },
): Exportable {
  // A result that changed the room (returned by its owner, refused by the structure check, or kept anyway) never goes
  // into a listing; one it flagged, once its owner confirmed they checked the walls and windows.
  const refusal = mlsRefusal({
    verdict: v.structureVerdict,
    confirmedAt: v.structureConfirmedAt,
    returnedAt: v.structureReturnedAt,
  });
  if (refusal)
    return {
      ok: false,
      reason: refusal,
      code: "conflict",
      ...(refusal === FLAGGED_NOT_CONFIRMED ? { unconfirmed: true as const } : {}),
    };
  const kind: string = v.kind;
  if (!isDisclosedKind(kind))
    return {
      ok: false,
      code: "forbidden",
      reason: `A "${kind}" result changes permanent features (wall colour, cabinets, a remodel, landscaping): it is not staging and is never exported for a listing.`,
    };
  if (!d.profile.publishable.includes(kind))
    return {
      ok: false,
      code: "forbidden",
      reason: `${d.profile.name} does not allow publishing ${KIND_NAMES[kind].toLowerCase()} results (${d.profile.source.rule}).`,
    };
  return { ok: true, kind };
}

/**
 * The label's lines for a kind: the statement, then where the original is. The account's own wording replaces the
 * statement of a staged result only, and only while it says the photo was altered (a wording saved before that rule
 * too): a sky or a removal says what was done in the profile's words.
 */
export function labelLines(d: Disclosure, kind: DisclosedKind, pageUrl: string | null): string[] | null {
  const label = d.profile.label;
  if (!label) return [];
  const own =
    kind === "stage" && d.settings.text !== null && statesAlteration(d.settings.text) ? d.settings.text : null;
  const lines = [own ?? label.statement[kind]];
  if (label.originalLine) {
    const where = fillLink(label.originalLine, pageUrl, true);
    if (where === null) return null;
    lines.push(where);
  }
  return lines;
}

/**
 * The label burned into a version under this profile: null for a clean photo (the profile puts nothing on it),
 * "needs-page" when the label gives the original's address and the version has no live original page.
 */
export function labelFor(d: Disclosure, kind: DisclosedKind, pageUrl: string | null): LabelSpec | null | "needs-page" {
  const label = d.profile.label;
  if (!label) return null;
  const lines = labelLines(d, kind, pageUrl);
  const qr = label.qr && d.settings.qr;
  if (lines === null || (qr && pageUrl === null)) return "needs-page";
  return { lines, corner: d.settings.corner, size: d.settings.size, tone: d.settings.tone, qrUrl: qr ? pageUrl : null };
}

/** The photo's caption under this profile; null when it gives the original's address and there is no live page. */
export function captionFor(d: Disclosure, kind: DisclosedKind, pageUrl: string | null): string | null {
  return fillLink(d.profile.captions[kind], pageUrl);
}
