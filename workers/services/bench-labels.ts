import { folders, photos, photoVersions, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { describeImage } from "@workers/lib/image-facts";
import { photoPrefix } from "@workers/lib/photo-storage";
import { eq } from "drizzle-orm";
import { fail, NOT_FOUND, ok } from "~/shared/result";
import { labelsPrefix } from "./mls/labels";
import type { Deps } from "./request-deps";

// Benchmark fixtures for the disclosure label's CPU (bench/labels.ts, docs/decisions/0250-labels-drawn-by-images.md),
// mounted under /api/dev only with dev tools on: a listing of `count` photos, each with one staged result (the bytes
// the bench sends, stored once per photo as its original and its result, as a job would leave them), and the
// labels' cache cleared so every run renders every label (the cache is keyed by version and label).

const MAX_PHOTOS = 200;

/** A folder (the account's profile: California, labelled with a QR code) of `count` photos with a staged result. */
export async function seedBenchListing(
  deps: Pick<Deps, "db" | "bucket">,
  userId: string,
  count: number,
  bytes: Uint8Array,
) {
  const { db, bucket } = deps;
  if (!Number.isInteger(count) || count < 1 || count > MAX_PHOTOS) return fail("invalid", `1-${MAX_PHOTOS} photos.`);
  const user = await db.select({ id: users.id }).from(users).where(eq(users.id, userId)).get();
  if (!user) return NOT_FOUND;
  let info: ReturnType<typeof describeImage>;
  try {
    info = describeImage(bytes);
  } catch {
    return fail("unprocessable", "Send a JPEG or PNG.");
  }
  const contentType = info.contentType === "image/png" ? "image/png" : "image/jpeg";
  const now = Date.now();
  const folderId = randomToken();
  await db.insert(folders).values({ id: folderId, userId, name: `Bench listing ${count}`, createdAt: now });
  const versionIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const photoId = randomToken();
    const versionId = randomToken();
    const prefix = photoPrefix(userId, photoId);
    const originalKey = `${prefix}original`;
    const versionKey = `${prefix}versions/${versionId}`;
    await bucket.put(originalKey, bytes, { httpMetadata: { contentType } });
    await bucket.put(versionKey, bytes, { httpMetadata: { contentType } });
    await db.batch([
      db.insert(photos).values({
        id: photoId,
        userId,
        folderId,
        name: `Room ${String(i + 1).padStart(3, "0")}.jpg`,
        originalKey,
        thumbKey: originalKey,
        contentType,
        bytes: bytes.byteLength,
        width: info.width,
        height: info.height,
        thumbWidth: info.width,
        thumbHeight: info.height,
        createdAt: now + i,
      }),
      db.insert(photoVersions).values({
        id: versionId,
        photoId,
        userId,
        jobId: randomToken(),
        kind: "stage",
        params: { roomType: "livingroom", designStyle: "modern" },
        key: versionKey,
        thumbKey: versionKey,
        contentType,
        bytes: bytes.byteLength,
        width: info.width,
        height: info.height,
        createdAt: now + i,
        storedVerdict: "passed",
      }),
    ]);
    versionIds.push(`${photoId}/${versionId}`);
  }
  return ok({ folderId, versions: versionIds });
}

/** Deletes every rendered label of the user's photos: the next download or pack renders each one again. */
export async function clearBenchLabels(deps: Pick<Deps, "db" | "bucket">, userId: string) {
  const { db, bucket } = deps;
  const rows = await db.select({ id: photos.id }).from(photos).where(eq(photos.userId, userId)).all();
  let deleted = 0;
  for (const { id } of rows) {
    const listed = await bucket.list({ prefix: labelsPrefix({ userId, photoId: id }) });
    const keys = listed.objects.map((o) => o.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
  }
  return ok({ deleted });
}
