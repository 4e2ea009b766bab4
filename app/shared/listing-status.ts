// A listing's status and how long its original pages stay up once it is sold (docs/decisions/0170-mls-profiles.md).
// Kept apart from the MLS profiles (app/shared/mls-profiles.ts re-exports it): the dashboard's listing panel needs
// these on the client, and the profiles' data would add 1.6 KB of gzipped JavaScript to /dashboard (issue 44).

export const LISTING_STATUSES = ["active", "pending", "sold"] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];
export const LISTING_STATUS_NAMES: Record<ListingStatus, string> = {
  active: "Active",
  pending: "Pending",
  sold: "Sold / off market",
};
/** While a listing is active or pending it still advertises: its original pages must stay reachable. */
export function advertises(status: ListingStatus): boolean {
  return status !== "sold";
}
export const CLOSE_DAYS_DEFAULT = 30;
export const CLOSE_DAYS_MAX = 365;
