// The landing page's measured figures as GET /api/figures answers them (docs/decisions/0185-measured-landing-figures.md,
// 0231-figures-from-the-agents-side.md). A number on a public page is measured or it is not shown: below
// MIN_JOBS_FOR_FIGURES finished jobs a figure is null. Times run from the request that asked for the job to its
// result, the wait in the user's queue and at the provider gate included: what an agent waits.

/** Fewer finished jobs than this in the window: no percentage, no median. */
export const MIN_JOBS_FOR_FIGURES = 50;

/** One kind of job's figures: single photos, or members of batches. */
export interface FigureGroup {
  /** Jobs asked for that ended in the window. */
  jobs: number;
  /**
   * Whole percent delivered and charged, rounded down (never a better figure than measured): a failure, a refund or
   * a result the structure check refused counts against. Null when too few.
   */
  successPercent: number | null;
  /** The median time from the request to the result of the delivered jobs, in ms; null when too few. */
  medianMs: number | null;
  /** The median as the page shows it ("42s", "2 min"); null when too few. */
  median: string | null;
}

export interface SiteFigures extends FigureGroup {
  /** The top-level figures are what the landing page shows: the success of every job, the single photo's median. */
  single: FigureGroup;
  /** Batch members wait for each other in the user's queue (the plan's concurrency): reported apart. */
  batch: FigureGroup;
  /** When the figures were computed (ms); 0 when they never were. */
  computedAt: number;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${Math.max(s, 1)}s` : `${Math.round(s / 60)} min`;
}

export interface RawGroup {
  total: number;
  succeeded: number;
  medianMs: number | null;
}

function group(raw: RawGroup): FigureGroup {
  const enough = raw.total >= MIN_JOBS_FOR_FIGURES;
  return {
    jobs: raw.total,
    successPercent: enough ? Math.floor((raw.succeeded * 100) / raw.total) : null,
    medianMs: enough && raw.medianMs !== null ? Math.round(raw.medianMs) : null,
    median: enough && raw.medianMs !== null ? formatDuration(raw.medianMs) : null,
  };
}

export function siteFigures(raw: { single: RawGroup; batch: RawGroup; computedAt: number }): SiteFigures {
  const single = group(raw.single);
  const batch = group(raw.batch);
  const all = group({
    total: raw.single.total + raw.batch.total,
    succeeded: raw.single.succeeded + raw.batch.succeeded,
    medianMs: null,
  });
  return {
    jobs: all.jobs,
    successPercent: all.successPercent,
    medianMs: single.medianMs,
    median: single.median,
    single,
    batch,
    computedAt: raw.computedAt,
  };
}

/** The answer before any figures were computed: nothing to show. */
export const NO_FIGURES: SiteFigures = siteFigures({
  single: { total: 0, succeeded: 0, medianMs: null },
  batch: { total: 0, succeeded: 0, medianMs: null },
  computedAt: 0,
});
