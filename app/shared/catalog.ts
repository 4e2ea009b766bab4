// The catalogue: the one source of plans, room types, design styles and sky
// types for every screen and for the server (docs/product.md and
// provider-api.md). Prices are whole US dollars.

export type PlanId = "small" | "starter" | "popular" | "standard" | "professional";
export type BillingInterval = "month" | "year";

export interface Plan {
  id: PlanId;
  name: string;
  /** Monthly price in dollars. */
  price: number;
  /** Price of a year paid at once, in dollars (the spec's per-month figure x 12). */
  yearlyPrice: number;
  /** Credits granted each month of the subscription. */
  credits: number;
  properties: number;
  icon: "home" | "key" | "star" | "building" | "briefcase";
  features: string[];
  /** The provider's palettes and seasonal decor, creativity and an instruction (enforced on the server). */
  advancedCustomization: boolean;
  /** How many of the user's photos are sent to the AI provider at once; the rest wait in their queue. */
  batchConcurrency: number;
  /** Stripe price lookup keys, one per billing interval. */
  lookupKeys: Record<BillingInterval, string>;
}

function features(properties: number, extra: string[] = []): string[] {
  return [
    `Stage ${properties} ${properties === 1 ? "property" : "properties"}`,
    "All photos included",
    "All room types and styles",
    "Furniture removal",
    "No watermark",
    "Extra options if you dislike the styling",
    ...extra,
  ];
}

export const PLANS: readonly Plan[] = [
  {
    id: "small",
    name: "Small plan",
    price: 29,
    yearlyPrice: 19 * 12,
    credits: 9,
    properties: 1,
    icon: "home",
    features: features(1),
    advancedCustomization: false,
    batchConcurrency: 4,
    lookupKeys: { month: "small_monthly", year: "small_yearly" },
  },
  {
    id: "starter",
    name: "Starter plan",
    price: 49,
    yearlyPrice: 32 * 12,
    credits: 22,
    properties: 2,
    icon: "key",
    features: features(2, ["Advanced customization"]),
    advancedCustomization: true,
    batchConcurrency: 4,
    lookupKeys: { month: "starter_monthly", year: "starter_yearly" },
  },
  {
    id: "popular",
    name: "Popular plan",
    price: 89,
    yearlyPrice: 39 * 12,
    credits: 44,
    properties: 4,
    icon: "star",
    features: features(4),
    advancedCustomization: false,
    batchConcurrency: 4,
    lookupKeys: { month: "popular_monthly", year: "popular_yearly" },
  },
  {
    id: "standard",
    name: "Standard plan",
    price: 129,
    yearlyPrice: 59 * 12,
    credits: 66,
    properties: 6,
    icon: "building",
    features: features(6, ["Advanced customization"]),
    advancedCustomization: true,
    batchConcurrency: 4,
    lookupKeys: { month: "standard_monthly", year: "standard_yearly" },
  },
  {
    id: "professional",
    name: "Professional plan",
    price: 149,
    yearlyPrice: 96 * 12,
    credits: 88,
    properties: 8,
    icon: "briefcase",
    features: features(8, ["Advanced customization", "Faster batches: 8 photos at once"]),
    advancedCustomization: true,
    batchConcurrency: 8,
    lookupKeys: { month: "professional_monthly", year: "professional_yearly" },
  },
];

/**
 * The team plan: billed per seat (Stripe bills the subscription item's quantity), monthly only. Each seat adds
 * its credits to the team's shared pool every period; a seat added mid-period adds only the share its proration
 * paid for (docs/decisions/0290-seats-billed-as-stripe-bills-seats.md). It is not one of PLANS: a person's own
 * plan and a team's seats are bought, shown and applied apart.
 */
export interface TeamPlan {
  id: "team";
  name: string;
  /** Monthly price of one seat, in dollars. */
  pricePerSeat: number;
  /** Credits each seat adds to the team's pool every month. */
  creditsPerSeat: number;
  /** Seats a team can have: at least its owner's. */
  minSeats: number;
  maxSeats: number;
  /** The Stripe price lookup key of one seat for a month. */
  lookupKey: string;
}

export const TEAM_PLAN: TeamPlan = {
  id: "team",
  name: "Team plan",
  pricePerSeat: 59,
  creditsPerSeat: 30,
  minSeats: 1,
  maxSeats: 50,
  lookupKey: "team_seat_monthly",
};

/** Finds a plan by id or by its display name (the spec's links carry the name). */
export function findPlan(idOrName: string | null | undefined): Plan | undefined {
  if (!idOrName) return undefined;
  const key = idOrName.trim().toLowerCase();
  return PLANS.find((p) => p.id === key || p.name.toLowerCase() === key);
}

export function findPlanByLookupKey(lookupKey: string): { plan: Plan; interval: BillingInterval } | undefined {
  for (const plan of PLANS) {
    for (const interval of ["month", "year"] as const) {
      if (plan.lookupKeys[interval] === lookupKey) return { plan, interval };
    }
  }
  return undefined;
}

/** The yearly plan's monthly equivalent: yearlyPrice / 12 to two decimals. */
export function yearlyMonthlyEquivalent(plan: Plan): string {
  return (plan.yearlyPrice / 12).toFixed(2);
}

export const CREDITS_PER_IMAGE = 1;
// In a module of their own, so the upload panel's rules do not bring the plans and styles into /dashboard (issue 44).
export { ACCEPTED_UPLOAD_TYPES, MAX_UPLOAD_BYTES } from "./upload-limits.ts";
export const SUPPORT_EMAIL_DEFAULT = "support@stagewise.example.com";
export const BULK_PRICE_PER_PROPERTY = 16;
export const BULK_MIN_PROPERTIES = 10;

export interface CodedOption {
  name: string;
  code: string;
}

export const ROOM_TYPES: readonly CodedOption[] = [
  { name: "Living Room", code: "livingroom" },
  { name: "Kitchen", code: "kitchen" },
  { name: "Dining Room", code: "diningroom" },
  { name: "Bedroom", code: "bedroom" },
  { name: "Bathroom", code: "bathroom" },
  { name: "Kids Room", code: "kidsroom" },
  { name: "Family Room", code: "familyroom" },
  { name: "Reading Nook", code: "readingnook" },
  { name: "Sunroom", code: "sunroom" },
  { name: "Walk-in Closet", code: "walkincloset" },
  { name: "Mudroom", code: "mudroom" },
  { name: "Toy Room", code: "toyroom" },
  { name: "Office Room", code: "office" },
  { name: "Foyer", code: "foyer" },
  { name: "Powder Room", code: "powderroom" },
  { name: "Laundry Room", code: "laundryroom" },
  { name: "Gym", code: "gym" },
  { name: "Basement", code: "basement" },
  { name: "Garage", code: "garage" },
  { name: "Balcony", code: "balcony" },
  { name: "Cafe", code: "cafe" },
  { name: "Home Bar", code: "homebar" },
  { name: "Study Room", code: "study_room" },
  { name: "Front Porch", code: "front_porch" },
  { name: "Back Porch", code: "back_porch" },
  { name: "Back Patio", code: "back_patio" },
  { name: "Open Plan", code: "openplan" },
  { name: "Boardroom", code: "boardroom" },
  { name: "Meeting Room", code: "meetingroom" },
  { name: "Open Workspace", code: "openworkspace" },
  { name: "Private Office", code: "privateoffice" },
];

const STYLE_NAMES = [
  "Minimalist",
  "Scandinavian",
  "Industrial",
  "Boho",
  "Traditional",
  "Art Deco",
  "Mid-Century Modern",
  "Coastal",
  "Tropical",
  "Eclectic",
  "Contemporary",
  "French Country",
  "Rustic",
  "Shabby Chic",
  "Vintage",
  "Country",
  "Modern",
  "Asian Zen",
  "Hollywood Regency",
  "Bauhaus",
  "Mediterranean",
  "Farmhouse",
  "Victorian",
  "Gothic",
  "Moroccan",
  "Southwestern",
  "Transitional",
  "Maximalist",
  "Arabic",
  "Japandi",
  "Retrofuturism",
  "Art Nouveau",
  "Urban Modern",
  "Wabi Sabi",
  "Grandmillennial",
  "Coastal Grandmother",
  "New Traditional",
  "Cottagecore",
  "Luxe Modern",
  "High Tech",
  "Organic Modern",
  "Tuscan",
  "Cabin",
  "Desert Modern",
  "Global",
  "Industrial Chic",
  "Modern Farmhouse",
  "European Classic",
  "Neo-Traditional",
  "Warm Minimalist",
  "MODERNGLAM",
  "TRANSITIONALGLAM",
] as const;

const STYLE_CODE_EXCEPTIONS: Record<string, string> = {
  "Asian Zen": "asian_zen",
  "Wabi Sabi": "wabi_sabi",
  "High Tech": "high_tech",
};
const STYLE_LABELS: Record<string, string> = { MODERNGLAM: "Modern Glam", TRANSITIONALGLAM: "Transitional Glam" };
/**
 * The spec's two glam styles are not provider styles (its DESIGN_STYLES lists 50): each is sent as the provider
 * style closest to it, and the menu says so. docs/decisions/0151-provider-as-documented.md
 */
const SENT_AS: Record<string, string> = { MODERNGLAM: "luxemodern", TRANSITIONALGLAM: "hollywoodregency" };

export interface DesignStyle extends CodedOption {
  /** How the style is shown to people. */
  label: string;
  /** The provider's code sent for it (the same as `code` except for the two glam styles). */
  provider: string;
}

export const DESIGN_STYLES: readonly DesignStyle[] = STYLE_NAMES.map((name) => {
  const code = STYLE_CODE_EXCEPTIONS[name] ?? name.toLowerCase().replace(/[\s-]/g, "");
  return { name, label: STYLE_LABELS[name] ?? name, code, provider: SENT_AS[name] ?? code };
});

/** The provider style a style of ours is sent as (an unknown code is sent as it is: the provider refuses it). */
export function providerStyleCode(code: string): string {
  return DESIGN_STYLES.find((s) => s.code === code)?.provider ?? code;
}

/** How a style is shown in a menu: its label, and the provider style it is sent as when that is another. */
export function styleMenuLabel(style: DesignStyle): string {
  if (style.provider === style.code) return style.label;
  const as = DESIGN_STYLES.find((s) => s.code === style.provider);
  return `${style.label} (as ${as?.label ?? style.provider})`;
}

export const SKY_TYPES = ["day", "dusk", "night"] as const;
export type SkyType = (typeof SKY_TYPES)[number];
export function isSkyType(value: unknown): value is SkyType {
  return typeof value === "string" && (SKY_TYPES as readonly string[]).includes(value);
}

// The quick dialog opened from a photo offers fewer, plainer choices. "Outdoor"
// has no provider room code of its own; the back patio is the closest outdoor
// space the provider knows.
export const QUICK_ROOM_TYPES: readonly CodedOption[] = [
  { name: "Living Room", code: "livingroom" },
  { name: "Bedroom", code: "bedroom" },
  { name: "Kitchen", code: "kitchen" },
  { name: "Bathroom", code: "bathroom" },
  { name: "Kids Room", code: "kidsroom" },
  { name: "Office Room", code: "office" },
  { name: "Outdoor", code: "back_patio" },
];

export const QUICK_FURNITURE_STYLES: readonly CodedOption[] = [
  { name: "Standard", code: "transitional" },
  { name: "Modern", code: "modern" },
  { name: "Luxury", code: "luxemodern" },
];
