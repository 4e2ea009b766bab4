import type { Database } from "@db/client";
import { type Job, type Photo, photoVersions } from "@db/schema";
import { ProviderError, type StageInput } from "@workers/adapters/provider";
import { signedImageUrl } from "@workers/lib/signed-urls";
import { and, eq } from "drizzle-orm";

// What a staging job sends the provider: a signed address of the image it
// starts from (the original or the version the person chose, e.g. the emptied
// room), the choices, the seed and, for a group of variations, how many results.
// docs/decisions/0141-provider-endpoints-follow-the-sdk.md

export const STAGE_FAILURE = "Failed to process image";

/**
 * An image's bytes read from R2 before its job was known to run (the user's object reads a lone staging job's original
 * while it reserves the credit): used only when `key` is the object the call starts from. `bytes` resolves to null
 * when the read failed or found nothing; the call then reads the object itself.
 */
export interface SourceReadAhead {
  key: string;
  bytes: Promise<Uint8Array | null>;
}

/** An object's bytes, or null when there is none. */
async function readBytes(env: Env, key: string): Promise<Uint8Array | null> {
  const object = await env.PHOTOS.get(key);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}

/** Starts reading `key`'s bytes; never rejects (null on any failure: the call reads again). */
export function readAhead(env: Env, key: string): SourceReadAhead {
  return { key, bytes: readBytes(env, key).catch(() => null) };
}

export async function stageInputFor(
  env: Env,
  db: Database,
  job: Job,
  photo: Photo,
  now: number,
  numImages = 1,
  ahead?: SourceReadAhead,
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
  return {
    imageUrl: await signedImageUrl(env, photo.id, version?.id ?? "original", now),
    image: async () => {
      const bytes = (ahead?.key === key ? await ahead.bytes : null) ?? (await readBytes(env, key));
      if (!bytes) throw new ProviderError(`${STAGE_FAILURE}: the original is missing`, false);
      return { bytes, contentType };
    },
    roomType: job.params.roomType ?? "livingroom",
    designStyle: job.params.designStyle ?? "modern",
    numImages,
    ...(job.params.seed !== undefined ? { seed: job.params.seed } : {}),
    colorScheme: job.params.colorScheme,
    specialityDecor: job.params.specialityDecor,
    keepOriginalFloor: job.params.keepOriginalFloor,
    prompt: job.params.prompt,
  };
}
