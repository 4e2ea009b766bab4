import type { Database } from "@db/client";
import { type Job, type Photo, photos, photoVersions } from "@db/schema";
import { ProviderError, type StageInput } from "@workers/adapters/provider";
import { signedImageUrl } from "@workers/lib/signed-urls";
import { and, eq, isNull, sql } from "drizzle-orm";
import { providerStaging } from "~/shared/staging-codes";
import { stagingDirective } from "~/shared/staging-options";
import { versionBytes } from "~/shared/version-bytes";
import { REFUSED_NOT_A_SOURCE } from "~/shared/version-view";
import { STAGE_SCALE_FACTOR } from "./listing-size";

// What a staging job sends the provider: a signed address of the image it
// starts from (the original or the version the person chose, e.g. the emptied
// room), the choices, the seed and, for a group of variations, how many results.
// The bytes go only to the legacy multipart call, tried when the documented call
// answers 404. docs/decisions/0151-provider-as-documented.md
// The listing's look the job was asked with goes as the provider's style reference, a signed address of that
// version, while the version exists and its photo is out of the trash; otherwise the call goes without it.
// docs/decisions/0190-one-look-for-a-listing.md

export const STAGE_FAILURE = "Failed to process image";

/**
 * The image a job starts from (the original, or the version the person chose) as the provider may have it: the
 * object's key for the signed address, and its type. Throws a ProviderError, before any call, when the version is
 * gone or was refused (ADR 0200: never a refused result's bytes).
 */
export async function jobSource(
  db: Database,
  job: Pick<Job, "photoId"> & { params: Pick<Job["params"], "source"> },
  photo: Pick<Photo, "userId" | "originalKey" | "contentType">,
  failure: string,
): Promise<{ variant: string; key: string; contentType: string }> {
  const from = job.params.source && job.params.source !== "original" ? job.params.source : null;
  if (!from) return { variant: "original", key: photo.originalKey, contentType: photo.contentType };
  const version = await db
    .select({
      key: photoVersions.key,
      thumbKey: photoVersions.thumbKey,
      structureVerdict: photoVersions.structureVerdict,
      contentType: photoVersions.contentType,
    })
    .from(photoVersions)
    .where(
      and(eq(photoVersions.id, from), eq(photoVersions.photoId, job.photoId), eq(photoVersions.userId, photo.userId)),
    )
    .get();
  if (!version) throw new ProviderError(`${failure}: the version it starts from is gone`, false);
  const full = versionBytes(version, "full");
  if (!full.ok) throw new ProviderError(`${failure}: ${REFUSED_NOT_A_SOURCE}`, false);
  return { variant: from, key: full.key, contentType: version.contentType };
}

export async function stageInputFor(
  env: Env,
  db: Database,
  job: Job,
  photo: Photo,
  now: number,
  numImages = 1,
): Promise<StageInput> {
  const [source, styleReference] = await Promise.all([
    jobSource(db, job, photo, STAGE_FAILURE),
    styleReferenceOf(env, db, job, now),
  ]);
  const { key, contentType } = source;
  const { roomType, designStyle, providerStyle } = providerStaging(job.params);
  return {
    imageUrl: await signedImageUrl(env, { photoId: photo.id, variant: source.variant, key }, now),
    image: async () => {
      const object = await env.PHOTOS.get(key);
      if (!object) throw new ProviderError(`${STAGE_FAILURE}: the original is missing`, false);
      return { bytes: new Uint8Array(await object.arrayBuffer()), contentType };
    },
    roomType,
    designStyle: providerStyle,
    numImages,
    scaleFactor: STAGE_SCALE_FACTOR,
    ...(job.params.seed !== undefined ? { seed: job.params.seed } : {}),
    colorScheme: job.params.colorScheme,
    specialityDecor: job.params.specialityDecor,
    ...(job.params.designCreativity !== undefined ? { designCreativity: job.params.designCreativity } : {}),
    ...(job.params.prompt ? { prompt: stagingDirective(roomType, designStyle, job.params.prompt) } : {}),
    ...(styleReference ? { styleReference } : {}),
  };
}

/** The job's style reference as the provider fetches it, or undefined when it has none or its version is gone. */
async function styleReferenceOf(env: Env, db: Database, job: Job, now: number): Promise<StageInput["styleReference"]> {
  const ref = job.params.styleReference;
  if (!ref) return undefined;
  const live = await db
    .select({
      key: photoVersions.key,
      thumbKey: photoVersions.thumbKey,
      structureVerdict: photoVersions.structureVerdict,
    })
    .from(photoVersions)
    .innerJoin(photos, eq(photos.id, photoVersions.photoId))
    .where(
      and(
        eq(photoVersions.id, ref.versionId),
        eq(photoVersions.photoId, ref.photoId),
        // A team listing's look may be a teammate's version in the same team's listings (ADR 0280).
        job.teamId
          ? sql`EXISTS (SELECT 1 FROM folders f WHERE f.id = ${photos.folderId} AND f.team_id = ${job.teamId})`
          : eq(photoVersions.userId, job.userId),
        isNull(photos.trashedAt),
      ),
    )
    .get();
  // Never a refused result's bytes (ADR 0200): the call goes without the look, as for a gone version.
  const full = live ? versionBytes(live, "full") : null;
  if (!full?.ok) return undefined;
  const image = { photoId: ref.photoId, variant: ref.versionId, key: full.key };
  return { url: await signedImageUrl(env, image, now), strength: ref.strength };
}
