import type { Database } from "@db/client";
import { type Job, type Photo, photos, photoVersions } from "@db/schema";
import { createProviderClient, type ProviderCallRecord, ProviderError } from "@workers/adapters/provider";
import { describeImage } from "@workers/lib/image-facts";
import { imagesFor } from "@workers/lib/images";
import { log } from "@workers/lib/log";
import { maskKey, resultOwner, storedMask } from "@workers/lib/photo-storage";
import { signedImageUrl, signedMaskUrl } from "@workers/lib/signed-urls";
import { putRetrying } from "@workers/lib/stored-retry";
import { and, eq } from "drizzle-orm";
import { MASK_MESSAGES } from "~/shared/masks";
import type { JobClock } from "./clock";
import {
  GENERIC_FAILURE,
  type JobKind,
  type JobResult,
  jobDeadline,
  providerTimeoutMs,
  versionKey,
  versionThumbKey,
} from "./job-rows";
import { atListingSize } from "./listing-size";
import { PaidPhotoGone } from "./paid-photos";
import { jobSource, stageInputFor } from "./stage-call";

// A job's result: the provider call, its result stored in R2 under the job's
// version key and described from its header, and its thumbnail once committed.

/**
 * Calls the provider for a running job and starts storing the result's bytes in R2: `stored` settles when they are
 * written (the commit awaits it before its first read). Throws ProviderError (or another Error) on any failure of
 * the call; writes no rows.
 */
export async function produce(
  env: Env,
  db: Database,
  job: Job,
  now: number,
  opts: {
    fetcher?: typeof fetch;
    photo?: Photo;
    /** Told of each provider call as it ends (jobs/tally.ts). */
    onCall?: (call: ProviderCallRecord) => void;
    /** Where the job's time goes (clock.ts): the result's R2 write is recorded there. */
    clock?: JobClock;
  } = {},
): Promise<{ result: JobResult; stored: Promise<void>; bytes: Uint8Array }> {
  const photo = opts.photo ?? (await db.select().from(photos).where(eq(photos.id, job.photoId)).get());
  // Another member's photo only in a team listing: the user's object checked the member may reach it when it took the job.
  if (!photo || (photo.userId !== job.userId && !job.teamId)) throw new ProviderError(GENERIC_FAILURE[job.kind], false);
  const timeoutMs = providerTimeoutMs(env);
  const client = createProviderClient(env, { fetcher: opts.fetcher, timeoutMs, onCall: opts.onCall });
  let bytes: Uint8Array;
  if (job.kind === "stage") {
    // Staging starts from the original, or from the version the person chose (e.g. the emptied room).
    bytes = await client.stage(await stageInputFor(env, db, job, photo, now, 1));
  } else {
    const source = await jobSource(db, job, photo, GENERIC_FAILURE[job.kind]);
    const imageUrl = await signedImageUrl(env, { photoId: photo.id, variant: source.variant, key: source.key }, now);
    // A brushed removal sends its mask too (docs/decisions/0195-removal-brush-masks.md), while it is still the photo's
    // mask: a newer one painted since replaced it (ADR 0211), and the provider is not called with another's.
    const maskId = job.params.mask;
    if (maskId && !(await storedMask(env.PHOTOS, photo.userId, photo.id, maskId))) {
      throw new ProviderError(MASK_MESSAGES.replaced, false);
    }
    const maskUrl = maskId
      ? await signedMaskUrl(env, { photoId: photo.id, maskId, key: maskKey(photo.userId, photo.id) }, now)
      : undefined;
    bytes =
      job.kind === "sky"
        ? await client.replaceSky({ imageUrl, skyType: job.params.skyType ?? "day" })
        : await client.removeFurniture({ imageUrl, maskUrl });
  }
  bytes = await atListingSize(client, bytes, jobDeadline(now, timeoutMs));
  try {
    const result = describeResult(job, bytes);
    const stored = opts.clock
      ? opts.clock.time("r2Write", () => putResult(env, result, bytes))
      : putResult(env, result, bytes);
    return { result, stored, bytes };
  } catch (err) {
    if (!(err instanceof NotAnImage)) throw err;
    throw new ProviderError(
      job.kind === "sky"
        ? "Invalid API response: No replaced sky image returned."
        : "Invalid API response: No processed images received.",
      true,
    );
  }
}

class NotAnImage extends Error {}

/**
 * Stores a result under its job's version key and describes it from the header only; the thumbnail is made after
 * the commit (finishThumb), so the person gets the result without waiting for a decode (its cost: bench/pixels.ts).
 * Throws NotAnImage for bytes that are neither JPEG nor PNG, storing nothing.
 */
export async function storeResult(
  env: Env,
  job: Pick<Job, "id" | "userId" | "teamId" | "photoId">,
  bytes: Uint8Array,
): Promise<JobResult> {
  const result = describeResult(job, bytes);
  await putResult(env, result, bytes);
  return result;
}

/** Writes a result's bytes under its key. */
async function putResult(env: Env, result: JobResult, bytes: Uint8Array): Promise<void> {
  await putRetrying(env.PHOTOS, result.key, bytes, { httpMetadata: { contentType: result.contentType } });
}

/** A result as stored under its job's version key, described from its header only; NotAnImage when it is not one. */
function describeResult(job: Pick<Job, "id" | "userId" | "teamId" | "photoId">, bytes: Uint8Array): JobResult {
  let info: ReturnType<typeof describeImage>;
  try {
    info = describeImage(bytes);
  } catch {
    throw new NotAnImage();
  }
  const owner = resultOwner(job);
  const key = versionKey(owner, job.photoId, job.id);
  return {
    versionId: job.id,
    key,
    thumbKey: key,
    pendingThumb: { key: versionThumbKey(owner, job.photoId, job.id), image: bytes },
    contentType: info.contentType,
    bytes: bytes.byteLength,
    width: info.width,
    height: info.height,
  };
}

export function failureMessage(kind: JobKind, err: unknown): string {
  if (err instanceof ProviderError || err instanceof PaidPhotoGone) return err.message;
  return GENERIC_FAILURE[kind];
}

/**
 * A refused result's thumbnail, made before its rows are written: a refused result is only ever shown at thumbnail
 * size, so its row must never point at the full image. When the thumbnail cannot be made the row keeps the image as
 * its thumbnail and the routes show no preview of it (docs/decisions/0162-results-true-to-the-room.md).
 */
export async function thumbFirst(env: Env, result: JobResult): Promise<JobResult> {
  if (!result.pendingThumb) return result;
  const { key, image } = result.pendingThumb;
  try {
    const thumb = await imagesFor(env).thumbnail(image);
    await putRetrying(env.PHOTOS, key, thumb, { httpMetadata: { contentType: "image/jpeg" } });
    return { ...result, thumbKey: key, pendingThumb: undefined };
  } catch (err) {
    log.error("refused result's thumbnail not made", { versionId: result.versionId, err, where: "job" });
    return { ...result, pendingThumb: undefined };
  }
}

/**
 * Makes a committed result's thumbnail and points the version (and the photo, while it shows that version) at it.
 * Until then both show the image itself; the photo's `processedAt` moves so the grid asks for the new thumbnail.
 * A failure leaves the image as its own thumbnail (heavier, still right).
 */
export async function finishThumb(
  env: Env,
  db: Database,
  job: Job,
  result: JobResult,
  now: number,
  clock?: JobClock,
): Promise<void> {
  if (!result.pendingThumb) return;
  const { key: thumbKey, image } = result.pendingThumb;
  const timed = <T>(part: "images" | "r2Write", work: () => Promise<T>) => (clock ? clock.time(part, work) : work());
  try {
    // Made by the platform's image service: nothing is decoded on the user's object (docs/decisions/0161).
    const thumb = await timed("images", () => imagesFor(env).thumbnail(image));
    await timed("r2Write", () =>
      putRetrying(env.PHOTOS, thumbKey, thumb, { httpMetadata: { contentType: "image/jpeg" } }),
    );
    await db.batch([
      db.update(photoVersions).set({ thumbKey }).where(eq(photoVersions.id, result.versionId)),
      db
        .update(photos)
        .set({ processedThumbKey: thumbKey, processedAt: now })
        .where(and(eq(photos.id, job.photoId), eq(photos.processedKey, result.key))),
    ]);
  } catch (err) {
    log.error("result thumbnail not made", { jobId: job.id, err, where: "job" });
  }
}
