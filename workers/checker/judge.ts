import { imagesFor } from "../lib/images";
import { analysisSize, checkStructure, toAnalysis } from "../lib/structure/check";
import { type Checked, type CheckRequest, UNCHECKED } from "../lib/structure/verdict";
import { describeImage } from "../lib/thumbnail";

// The check itself, as the check Worker runs it: read both pictures, reduce them through the Images binding (never
// a full-size decode here), compare at the analysis size (workers/lib/structure/check.ts).

/** The gray image the platform reduces each picture to before the check reduces it to its analysis size. */
const REDUCED_EDGE = 640;
/**
 * Pictures smaller than this on their long edge are not judged: the check compares at 320 px, and a thumbnail-sized
 * picture has no architecture to read at that size. (Listing photos are 2048 px and up; uploads keep 2560 px.)
 */
export const MIN_CHECKED_EDGE = 256;

export interface JudgeEnv {
  PHOTOS: R2Bucket;
  IMAGES: ImagesBinding;
  APP_ENV: string;
}

/**
 * Judges one request: "unchecked" when a picture is missing, too small or unreadable, or the image service fails,
 * never a refusal for those. Runs in the check Worker, never on a user's object.
 */
export async function judge(
  env: JudgeEnv,
  req: CheckRequest,
  images: { start: number; end: number; calls: number } = { start: 0, end: 0, calls: 0 },
): Promise<Checked> {
  const [source, result] = await Promise.all([bytesOf(env, req.sourceKey), bytesOf(env, req.resultKey)]);
  if (!source || !result || longEdge(source) < MIN_CHECKED_EDGE || longEdge(result) < MIN_CHECKED_EDGE) {
    return UNCHECKED;
  }
  const service = imagesFor(env);
  // Timed for the job's split (docs/decisions/0226): the two reductions run side by side.
  images.start = Date.now();
  images.calls = 2;
  const [src, res] = await Promise.all([
    service.analysisGray(source, REDUCED_EDGE),
    service.analysisGray(result, REDUCED_EDGE),
  ]).finally(() => {
    images.end = Date.now();
  });
  const size = analysisSize(src.width, src.height);
  const verdict = checkStructure(
    toAnalysis(src.data, src.width, src.height, size),
    toAnalysis(res.data, res.width, res.height, size),
    { kind: req.kind },
  );
  return { verdict: verdict.pass ? "passed" : "refused", score: Math.round(verdict.score * 1000) / 1000 };
}

async function bytesOf(env: JudgeEnv, key: string): Promise<Uint8Array | null> {
  const object = await env.PHOTOS.get(key);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}

function longEdge(bytes: Uint8Array): number {
  try {
    const { width, height } = describeImage(bytes);
    return Math.max(width, height);
  } catch {
    return 0;
  }
}
