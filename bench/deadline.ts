// A request or a run that never answers must not hold the bench for a quarter of an hour (a revision's stack once
// lost a connection and its fetch waited 875 s): requests without a signal of their own get one with a deadline,
// and a module's run that outlives its deadline fails, so measureWithRetry tries it again.

/** No request of the bench waits this long: the longest provider latency it asks for is the provider's 120 s timeout. */
export const FETCH_DEADLINE_MS = Number(process.env.BENCH_FETCH_DEADLINE_MS ?? 180_000);
/** No module's run takes this long on a loaded machine; the batch's own polling gives up at 300 s. */
export const RUN_DEADLINE_MS = Number(process.env.BENCH_RUN_DEADLINE_MS ?? 600_000);

/** Wraps a fetch so that a call without a signal is aborted after `ms` with a TimeoutError. */
export function withFetchDeadline(inner: typeof fetch, ms: number): typeof fetch {
  return (input, init) => inner(input, init?.signal ? init : { ...init, signal: AbortSignal.timeout(ms) });
}

/** Installs the deadline on the process's fetch once. */
export function guardFetch(ms = FETCH_DEADLINE_MS): void {
  const marked = globalThis as { __benchFetchGuarded?: boolean };
  if (marked.__benchFetchGuarded) return;
  globalThis.fetch = withFetchDeadline(globalThis.fetch, ms);
  marked.__benchFetchGuarded = true;
}

/** Settles as `work` does, or rejects once `ms` have passed with a message naming what ran over. */
export async function withinDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const over = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, over]);
  } finally {
    clearTimeout(timer);
  }
}
