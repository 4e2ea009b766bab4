import type { Database } from "@db/client";
import { type Job, type Photo, photoVersions } from "@db/schema";
import { ProviderError, type StageInput } from "@workers/adapters/provider";
import { signedImageUrl } from "@workers/lib/signed-urls";
import { and, eq } from "drizzle-orm";
import { providerStyleCode } from "~/shared/catalog";
import { stagingDirective } from "~/shared/staging-options";
import { STAGE_SCALE_FACTOR } from "./listing-size";

// What a staging job sends the provider: a signed address of the image it
// starts from (the original or the version the person chose, e.g. the emptied
// room), the choices, the seed and, for a group of variations, how many results.
// The bytes go only to the legacy multipart call, tried when the documented call
// answers 404. docs/decisions/0151-provider-as-documented.md

export const STAGE_FAILURE = "Failed to process image";

export async function stageInputFor(
  env: Env,
  db: Database,
  job: Job,
  photo: Photo,
  now: number,
  numImages = 1,
): Promise<StageInput> {
  const from = job.params.source && job.params.source !== "original" ? job.params.source : null;
  const version = from
    ? await db
        .select()
        .from(photoVersions)
        .where(
          and(eq(photoVersions.id, from), eq(photoVersions.photoId, job.photoId), eq(photoVersions.userId, job.userId)),
        )
        .get()
    : undefined;
  if (from && !version) throw new ProviderError(`${STAGE_FAILURE}: the version it starts from is gone`, false);
  const key = version?.key ?? photo.originalKey;
  const contentType = version?.contentType ?? photo.contentType;
  const roomType = job.params.roomType ?? "livingroom";
  const designStyle = job.params.designStyle ?? "modern";
  return {
    imageUrl: await signedImageUrl(env, photo.id, version?.id ?? "original", now),
    image: async () => {
      const object = await env.PHOTOS.get(key);
      if (!object) throw new ProviderError(`${STAGE_FAILURE}: the original is missing`, false);
      return { bytes: new Uint8Array(await object.arrayBuffer()), contentType };
    },
    roomType,
    designStyle: providerStyleCode(designStyle),
    numImages,
    scaleFactor: STAGE_SCALE_FACTOR,
    ...(job.params.seed !== undefined ? { seed: job.params.seed } : {}),
    colorScheme: job.params.colorScheme,
    specialityDecor: job.params.specialityDecor,
    ...(job.params.designCreativity !== undefined ? { designCreativity: job.params.designCreativity } : {}),
    ...(job.params.prompt ? { prompt: stagingDirective(roomType, designStyle, job.params.prompt) } : {}),
  };
}
