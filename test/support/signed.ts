import { env } from "cloudflare:workers";
import { photos } from "@db/schema";
import { maskKey } from "@workers/lib/photo-storage";
import { signedImageUrl, signedMaskUrl } from "@workers/lib/signed-urls";
import { jobSource } from "@workers/objects/user/jobs/stage-call";
import { eq } from "drizzle-orm";
import { db } from "./factories";

/**
 * The signed address a job would send the provider for a photo's variant ("original" or a version id), made the way
 * the job makes it: the stored object is found and the byte rule applied by jobSource, then signed. Throws as the job
 * would when the version is gone or refused. A photo that does not exist is signed with a key nothing is stored at.
 */
export async function signedAddressOf(
  photoId: string,
  variant = "original",
  now = Date.now(),
  ttlMs?: number,
  signer: Parameters<typeof signedImageUrl>[0] = env,
): Promise<string> {
  const photo = await db.select().from(photos).where(eq(photos.id, photoId)).get();
  const source = photo
    ? await jobSource(db, { photoId, params: { source: variant } }, photo, "Failed to sign")
    : { variant, key: `photos/nobody/${photoId}/original` };
  return signedImageUrl(signer, { photoId, variant: source.variant, key: source.key }, now, ttlMs);
}

/** The signed address a removal job would send for a photo's mask (ADR 0195, 0328): its owner's mask key, signed. */
export async function signedMaskOf(photoId: string, maskId: string, now = Date.now(), ttlMs?: number): Promise<string> {
  const photo = await db.select({ userId: photos.userId }).from(photos).where(eq(photos.id, photoId)).get();
  const key = maskKey(photo?.userId ?? "nobody", photoId);
  return signedMaskUrl(env, { photoId, maskId, key }, now, ttlMs);
}

/** The path and query of an address, for workerFetch. */
export function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}
