import { log } from "./log";

/**
 * Writes bytes to R2, trying again when the write throws. R2 answers a write with an internal error now and then
 * (production's 10001 "We encountered an internal error. Please try again.", the local runtime's "put: Unspecified
 * error (0)" under load); Cloudflare's advice for both is to try again. A write under one key with the same bytes is
 * idempotent, so trying again changes nothing but the odds. Only bodies that can be read twice are taken: a stream is
 * spent by the first try. The last error is thrown when every try fails (docs/decisions/0296).
 */
export function putRetrying(
  bucket: Pick<R2Bucket, "put">,
  key: string,
  value: ArrayBuffer | ArrayBufferView | string,
  options?: R2PutOptions,
  opts: RetryOptions = {},
): Promise<R2Object> {
  return retrying({ key }, opts, async () => {
    const stored = await bucket.put(key, value, options);
    // put() answers null only for a conditional write whose condition failed; these writes set none.
    if (!stored) throw new Error(`put: ${key} was not stored`);
    return stored;
  });
}

/**
 * Deletes keys from R2, trying again when the delete throws, as putRetrying does for a write: a delete is idempotent,
 * and the local runtime refuses one now and then while the same keys are being written (a job still storing its
 * result when its account is removed).
 */
export function deleteRetrying(
  bucket: Pick<R2Bucket, "delete">,
  keys: string[],
  opts: RetryOptions = {},
): Promise<void> {
  return retrying({ key: keys[0] ?? "", count: keys.length }, opts, () => bucket.delete(keys));
}

interface RetryOptions {
  tries?: number;
  pauseMs?: (attempt: number) => number;
  sleep?: (ms: number) => Promise<void>;
}

/** `work` tried up to `tries` times, the pause growing; the last error is thrown when every try fails. */
async function retrying<T>(
  what: Record<string, string | number>,
  opts: RetryOptions,
  work: () => Promise<T>,
): Promise<T> {
  const tries = opts.tries ?? PUT_TRIES;
  const pauseMs = opts.pauseMs ?? ((attempt) => PUT_PAUSE_MS * 4 ** (attempt - 1));
  const sleep = opts.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let lastError: unknown;
  for (let attempt = 1; attempt <= tries; attempt++) {
    try {
      return await work();
    } catch (err) {
      lastError = err;
      if (attempt === tries) break;
      log.warn("storage call failed, trying again", { ...what, attempt, err: String(err) });
      await sleep(pauseMs(attempt));
    }
  }
  throw lastError;
}

/** Three tries, the pause growing from PUT_PAUSE_MS: a short wait for a job that R2 failed twice, none otherwise. */
export const PUT_TRIES = 3;
export const PUT_PAUSE_MS = 100;
