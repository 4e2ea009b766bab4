// The landing page's measured figures as GET /api/figures answers them (docs/decisions/0185-measured-landing-figures.md).
// A number on a public page is measured or it is not shown: below MIN_JOBS_FOR_FIGURES the answer carries none.

/** Fewer finished jobs than this in the window: no percentage, no median. */
export const MIN_JOBS_FOR_FIGURES = 50;

export interface SiteFigures {
  /** Jobs that reached the provider and ended in the window. */
  jobs: number;
  /** Whole percent delivered and charged, rounded down (never a better figure than measured); null when too few. */
  successPercent: number | null;
  /** The median time from start to result, in ms; null when too few. */
  medianMs: number | null;
  /** The median as the page shows it ("42s", "2 min"); null when too few. */
  median: string | null;
  computedAt: number;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${Math.max(s, 1)}s` : `${Math.round(s / 60)} min`;
}

export function siteFigures(raw: { total: number; succeeded: number; medianMs: number | null; computedAt: number }) {
  const enough = raw.total >= MIN_JOBS_FOR_FIGURES;
  const figures: SiteFigures = {
    jobs: raw.total,
    successPercent: enough ? Math.floor((raw.succeeded * 100) / raw.total) : null,
    medianMs: enough && raw.medianMs !== null ? Math.round(raw.medianMs) : null,
    median: enough && raw.medianMs !== null ? formatDuration(raw.medianMs) : null,
    computedAt: raw.computedAt,
  };
  return figures;
}
