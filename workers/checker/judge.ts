import { describeImage } from "../lib/image-facts";
import { type GrayImage, imagesFor } from "../lib/images";
import { resultOwner, userPrefix } from "../lib/photo-storage";
import { keepGray, keptGray, sourceGrayKey } from "../lib/source-gray";
import { putRetrying } from "../lib/stored-retry";
import { changeMapPng } from "../lib/structure/change-map";
import { judgeGrays, REDUCED_EDGE } from "../lib/structure/check";
import {
  type Checked,
  type CheckRequest,
  fromWire,
  isWireLimits,
  STRUCTURE_LIMITS,
  type StructureLimits,
  UNCHECKED,
} from "../lib/structure/verdict";

// The check itself, as the check Worker runs it: read both pictures, reduce them through the Images binding (never
// a full-size decode here), compare at the analysis size (workers/lib/structure/check.ts).

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

/** The check's image service work, for the job's split (docs/decisions/0226): when, how many calls, and whether the
 * source's gray was the copy reduced beside the provider call (ADR 0322). */
export interface ImagesWork {
  start: number;
  end: number;
  calls: number;
  sourceAhead?: boolean;
}

/**
 * Judges one request: "unchecked" when a picture is missing, too small or unreadable, or the image service fails,
 * never a refusal for those. Runs in the check Worker, never on a user's object. The source's gray is the copy kept
 * beside its original when that copy is of the original's bytes (ADR 0322); otherwise it is reduced here, side by
 * side with the result, and kept for the next check of the same original.
 */
export async function judge(
  env: JudgeEnv,
  req: CheckRequest,
  images: ImagesWork = { start: 0, end: 0, calls: 0 },
): Promise<Checked> {
  const [source, result] = await Promise.all([sourceOf(env, req.sourceKey), bytesOf(env, req.resultKey)]);
  if (!source || !result || longEdge(result) < MIN_CHECKED_EDGE) return { ...UNCHECKED, cause: "unjudgeable" };
  const service = imagesFor(env);
  // Timed for the job's split (docs/decisions/0226): the reductions run side by side.
  images.start = Date.now();
  images.calls = "gray" in source ? 1 : 2;
  images.sourceAhead = "gray" in source;
  const [src, res] = await Promise.all([
    "gray" in source ? source.gray : service.analysisGray(source.bytes, REDUCED_EDGE),
    service.analysisGray(result, REDUCED_EDGE),
  ]).finally(() => {
    images.end = Date.now();
  });
  const { verdict, score, reasons, map } = judgeGrays(req.kind, src, res, limitsFor(env, req));
  // A copy for the next check of this original; a failed write costs that check a reduction, nothing else.
  const keeping = "bytes" in source ? keepGray(env.PHOTOS, req.sourceKey, source.etag, src).catch(() => false) : null;
  const [mapped] = await Promise.all([storeMap(env, req, changeMapPng(map)), keeping]);
  return { verdict, score, reasons, mapped };
}

/**
 * Reduces a job's source while the provider works on it, and keeps its gray beside the original (ADR 0322), unless
 * a copy of the same bytes is kept already. Only originals are kept; anything else, or a picture too small to judge,
 * is left alone. Nobody waits for it: a failure leaves the check to reduce the source itself.
 */
export async function prepareSource(env: JudgeEnv, sourceKey: string): Promise<"kept" | "had" | "skipped"> {
  const source = sourceGrayKey(sourceKey) ? await sourceOf(env, sourceKey) : null;
  if (!source) return "skipped";
  if ("gray" in source) return "had";
  const gray = await imagesFor(env).analysisGray(source.bytes, REDUCED_EDGE);
  return (await keepGray(env.PHOTOS, sourceKey, source.etag, gray)) ? "kept" : "skipped";
}

/**
 * A job's source as the check needs it: the gray kept beside an original when it was reduced from the original's
 * current bytes (their etags match), else the picture's bytes with their etag, read once. Null when the picture is
 * gone or too small to judge. A key that gets no copy (a version) is read at once, without asking for one.
 */
async function sourceOf(
  env: JudgeEnv,
  key: string,
): Promise<{ gray: GrayImage } | { bytes: Uint8Array; etag: string } | null> {
  if (sourceGrayKey(key)) {
    const [head, kept] = await Promise.all([env.PHOTOS.head(key), keptGray(env.PHOTOS, key).catch(() => null)]);
    if (!head) return null;
    if (kept?.sourceEtag === head.etag) return { gray: kept.gray };
  }
  const object = await env.PHOTOS.get(key);
  if (!object) return null;
  const bytes = new Uint8Array(await object.arrayBuffer());
  return longEdge(bytes) < MIN_CHECKED_EDGE ? null : { bytes, etag: object.etag };
}

/**
 * Stores a judged result's change map where the request says (ADR 0260): only under the same user's photos, or for
 * a team job under its team's (ADR 0298), beside the result (the key comes from that user's object, but a key
 * elsewhere is never written). A failed write leaves the verdict as it is, without a map.
 */
export async function storeMap(env: Pick<JudgeEnv, "PHOTOS">, req: CheckRequest, png: Uint8Array): Promise<boolean> {
  const key = req.mapKey;
  const prefixes = [userPrefix(req.userId)];
  if (req.teamId && /^[a-z0-9]+$/.test(req.teamId)) prefixes.push(userPrefix(resultOwner(req)));
  if (!key || !prefixes.some((p) => key.startsWith(p)) || !key.endsWith(".changes.png") || key.includes("..")) {
    return false;
  }
  try {
    await putRetrying(env.PHOTOS, key, png, { httpMetadata: { contentType: "image/png" } });
    return true;
  } catch {
    return false;
  }
}

/**
 * The limits a check is judged by: the kind's STRUCTURE_LIMITS, or, in tests and development only, the ones the
 * request carries (set on the user's object with setStructureLimitsForTesting, so a test can run the refusal path
 * while production refuses nothing). A deployed check Worker (APP_ENV production) never reads them.
 */
export function limitsFor(env: Pick<JudgeEnv, "APP_ENV">, req: Pick<CheckRequest, "kind" | "limits">): StructureLimits {
  const testing = env.APP_ENV === "test" || env.APP_ENV === "development";
  return testing && isWireLimits(req.limits) ? fromWire(req.limits) : STRUCTURE_LIMITS[req.kind];
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
