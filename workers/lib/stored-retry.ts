import { log } from "./log";

/**
 * Writes bytes to R2, trying again when the write throws. R2 answers a write with an internal error now and then
 * (production's 10001 "We encountered an internal error. Please try again.", the local runtime's "put: Unspecified
 * error (0)" under load); Cloudflare's advice for both is to try again. A write under one key with the same bytes is
 * idempotent, so trying again changes nothing but the odds. Only bodies that can be read twice are taken: a stream is
 * spent by the first try. The last error is thrown when every try fails (docs/decisions/0296).
 */
export async function putRetrying(
  bucket: Pick<R2Bucket, "put">,
  key: string,
  value: ArrayBuffer | ArrayBufferView | string,
  options?: R2PutOptions,
  opts: { tries?: number; pauseMs?: (attempt: number) => number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<R2Object> {
  const tries = opts.tries ?? PUT_TRIES;
  const pauseMs = opts.pauseMs ?? ((attempt) => PUT_PAUSE_MS * 4 ** (attempt - 1));
  const sleep = opts.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let lastError: unknown;
  for (let attempt = 1; attempt <= tries; attempt++) {
    try {
      const stored = await bucket.put(key, value, options);
      // put() answers null only for a conditional write whose condition failed; these writes set none.
      if (!stored) throw new Error(`put: ${key} was not stored`);
      return stored;
    } catch (err) {
      lastError = err;
      if (attempt === tries) break;
      log.warn("storage write failed, trying again", { key, attempt, err: String(err) });
      await sleep(pauseMs(attempt));
    }
  }
  throw lastError;
}

/** Three tries, the pause growing from PUT_PAUSE_MS: a short wait for a job that R2 failed twice, none otherwise. */
export const PUT_TRIES = 3;
export const PUT_PAUSE_MS = 100;
