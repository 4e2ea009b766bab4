import type { Photo } from "@db/schema";
import { storedMask } from "@workers/lib/photo-storage";
import { getVersion } from "@workers/objects/client";
import type { Deps } from "@workers/services/request-deps";
import { MASK_ID_PATTERN, MASK_MESSAGES, maskSizeProblem } from "~/shared/masks";
import { fail, ok, type Result } from "~/shared/result";
import { VERSION_NOT_FOUND } from "~/shared/version-view";

// A removal job's mask, as the job's way in checks it: the stored mask it names must still be the photo's and fit
// the image the removal starts from. Storing a mask (masks.ts) is a request of its own, with its own rate limit.

export const NO_VERSION = fail("not_found", VERSION_NOT_FOUND);

/** The pixel size of one of the photo's images: "original" or the id of a version of it; null when there is none. */
export async function imageSize(
  db: Deps["db"],
  photo: Photo,
  source: string,
): Promise<{ width: number; height: number } | null> {
  if (source === "original") return { width: photo.width, height: photo.height };
  const version = await getVersion(db, photo.userId, photo.id, source);
  // A refused result is not painted on, as no job starts from it (ADR 0162).
  return version && version.structureVerdict !== "refused" ? { width: version.width, height: version.height } : null;
}

/**
 * Whether a removal of `photo` starting from `source` may use the stored mask `maskId`: it must be this photo's
 * mask (not since replaced by a newer one) and exactly the size of that image (a mask painted on the original does
 * not fit an enlarged version, and is refused rather than stretched).
 */
export async function checkJobMask(
  deps: { db: Deps["db"]; bucket: R2Bucket },
  photo: Photo,
  source: string,
  maskId: string,
): Promise<Result> {
  if (!MASK_ID_PATTERN.test(maskId)) return fail("invalid", MASK_MESSAGES.badId);
  const size = await storedMask(deps.bucket, photo.userId, photo.id, maskId);
  if (!size) return fail("not_found", MASK_MESSAGES.notFound);
  const image = await imageSize(deps.db, photo, source);
  if (!image) return NO_VERSION;
  const wrongSize = maskSizeProblem(size, image);
  return wrongSize ? fail("unprocessable", wrongSize) : ok({});
}
