import type { ProviderClient } from "@workers/adapters/provider";
import { describeImage } from "@workers/lib/image-facts";
import { log } from "@workers/lib/log";
import { LISTING_LONG_EDGE } from "~/shared/listing";

// Results at listing resolution. Agents publish photos of 2048 px and more on
// the long edge (MLS photo guidance); the provider's results are 768 px wide
// unless asked for more. Staging asks for more in the same call (scale_factor,
// no extra provider call); a result that still comes back small enough for the
// provider's /upscale_image (at most 1024 px) is enlarged with one more call:
// furniture removal always (its call takes no scale_factor), the sky when the
// provider answers small. A result that cannot be enlarged, or whose enlarging
// fails, is delivered as it is: its version records its size, and the page says
// it is below listing size. docs/decisions/0151-provider-as-documented.md

/** The long edge of the provider's results at scale_factor 1 (768x512 staging, 768x576 removal in its samples). */
export const PROVIDER_RESULT_EDGE = 768;
/** What staging asks for: the smallest factor that takes 768 px to 2048 px or more (2304 px). */
export const STAGE_SCALE_FACTOR = Math.ceil(LISTING_LONG_EDGE / PROVIDER_RESULT_EDGE);
/** The provider enlarges images of at most this long edge, up to this factor (its HTTP documentation). */
export const UPSCALE_MAX_INPUT_EDGE = 1024;
export const UPSCALE_MAX_FACTOR = 4;
/** An enlargement is not started with less time than this left before the job's deadline. */
const MIN_UPSCALE_MS = 10_000;

/** The factor that takes a long edge to listing size, or null when none is needed or the provider cannot. */
export function upscaleFactorFor(longEdge: number): number | null {
  if (longEdge >= LISTING_LONG_EDGE || longEdge > UPSCALE_MAX_INPUT_EDGE || longEdge < 1) return null;
  return Math.min(UPSCALE_MAX_FACTOR, Math.ceil(LISTING_LONG_EDGE / longEdge));
}

/**
 * The result at listing size when the provider can make it so, else the result as it came. Never throws for a
 * failed enlargement: the job has its result either way. `deadline` (epoch ms) bounds the extra call.
 */
export async function atListingSize(
  client: Pick<ProviderClient, "upscale">,
  bytes: Uint8Array,
  deadline: number,
  now: () => number = Date.now,
): Promise<Uint8Array> {
  let info: ReturnType<typeof describeImage>;
  try {
    info = describeImage(bytes);
  } catch {
    return bytes; // not an image: the caller refuses it
  }
  const longEdge = Math.max(info.width, info.height);
  const factor = upscaleFactorFor(longEdge);
  const left = deadline - now();
  if (factor === null || left < MIN_UPSCALE_MS) return bytes;
  try {
    const larger = await client.upscale(
      { bytes, contentType: info.contentType, scaleFactor: factor },
      AbortSignal.timeout(left),
    );
    const got = describeImage(larger);
    return Math.max(got.width, got.height) > longEdge ? larger : bytes;
  } catch (err) {
    log.warn(`result kept at ${info.width}x${info.height}: ${err instanceof Error ? err.message : String(err)}`);
    return bytes;
  }
}
