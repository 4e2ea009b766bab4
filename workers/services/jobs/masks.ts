import { encodeHexLowerCase } from "@oslojs/encoding";
import { type MaskMetadata, maskKey } from "@workers/lib/photo-storage";
import { checkGrayPng } from "@workers/lib/png-rows";
import { putRetrying } from "@workers/lib/stored-retry";
import { sourceVariant } from "@workers/objects/client";
import { getPhoto } from "@workers/services/library";
import { MASK_RULE, overLimit } from "@workers/services/limits";
import type { Deps } from "@workers/services/request-deps";
import { MASK_MESSAGES, maskSizeProblem, readMaskSize } from "~/shared/masks";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { imageSize, NO_VERSION } from "./job-mask";

// Removal masks (issue 33, part 5; docs/decisions/0195-removal-brush-masks.md): the brush's PNG, white where
// something should go. Exactly the size of the image it was painted on, decoded whole and one channel of gray
// (docs/decisions/0211-masks-decoded-once-per-photo.md); one per photo, the newest, named by the SHA-256 of its bytes.
// A removal job names it (params.mask) and its call sends a signed address of it as mask_image_url, so a re-run of
// the job sends the same mask, while no newer one has replaced it. A job checks the mask it names in
// workers/services/jobs/job-mask.ts.

export interface MaskView {
  id: string;
  width: number;
  height: number;
  /** The image it was painted on: "original" or a version's id. */
  source: string;
}

/**
 * Stores a mask painted on one of the user's photos, out of the trash. `source` names the image it was painted on
 * ("original" or a version's id; by default the one a removal starts from: the newest version, else the original):
 * the mask must be exactly its size, and decode whole as a gray image. It replaces the photo's mask before it.
 * Refusals write nothing; storing the same bytes again answers the same mask.
 */
export async function storeMask(
  deps: Pick<Deps, "db" | "bucket" | "rateLimit">,
  userId: string,
  photoId: string,
  bytes: Uint8Array<ArrayBuffer>,
  source: string | undefined,
  /** Who sends it (a teammate, on a team listing's photo): the limit is theirs, not the photo's owner's. */
  by: { askedBy: string } = { askedBy: userId },
): Promise<Result<{ mask: MaskView }>> {
  const photo = await getPhoto(deps.db, userId, photoId);
  if (!photo || photo.trashedAt !== null) return NOT_FOUND;
  // Counted before the decode below, so a request over the limit costs no decoding.
  const limited = await overLimit(deps, MASK_RULE, [by.askedBy]);
  if (limited) return limited;
  const size = readMaskSize(bytes);
  if (size === "not-png") return fail("unsupported_media_type", MASK_MESSAGES.notPng);
  if (size === "damaged") return fail("unprocessable", MASK_MESSAGES.damaged);
  const on = source === undefined || source === "" ? await sourceVariant(deps.db, photo) : source;
  const image = on.length <= 64 ? await imageSize(deps.db, photo, on) : null;
  if (!image) return NO_VERSION;
  const wrongSize = maskSizeProblem(size, image);
  if (wrongSize) return fail("unprocessable", wrongSize);
  // Only now, its size known to be the image's, is it decoded: every row, none of them kept.
  const pixels = await checkGrayPng(bytes);
  if (pixels === "damaged") return fail("unprocessable", MASK_MESSAGES.damaged);
  if (pixels === "not-gray") return fail("unprocessable", MASK_MESSAGES.notGray);
  const id = encodeHexLowerCase(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
  const metadata: MaskMetadata = { id, width: String(size.width), height: String(size.height) };
  await putRetrying(deps.bucket, maskKey(userId, photo.id), bytes, {
    httpMetadata: { contentType: "image/png" },
    customMetadata: { ...metadata },
  });
  return ok({ mask: { id, width: size.width, height: size.height, source: on } });
}
