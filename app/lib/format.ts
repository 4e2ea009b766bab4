const dateFmt = new Intl.DateTimeFormat("en-US", { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" });
const dateTimeFmt = new Intl.DateTimeFormat("en-US", {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
  timeZoneName: "short",
});

/** Dates are formatted in UTC on server and client alike, so hydration matches. */
export function formatDate(ms: number | null | undefined): string {
  return ms ? dateFmt.format(ms) : "—";
}

export function formatDateTime(ms: number | null | undefined): string {
  return ms ? dateTimeFmt.format(ms) : "—";
}
