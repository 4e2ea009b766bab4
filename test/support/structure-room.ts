import { env } from "cloudflare:workers";
import { photos } from "@db/schema";
import { paintOver, providerSize } from "@test/fixtures/structure/edit";
import { decodeImage, encodeJpeg } from "@test/fixtures/structure/pixels";
import { ROOMS } from "@test/fixtures/structure/rooms";
import { db } from "@test/support/factories";
import type { ProviderStub } from "@test/support/provider-stub";
import { decodeBase64Strict } from "@workers/lib/base64";
import { userObject } from "@workers/objects/user-object";
import { eq } from "drizzle-orm";

// A real room photo for tests of the structure check on a job (docs/decisions/0160-structure-check.md): the labelled
// set's living room as a photo's original, and what a provider may answer for it: the same room at the provider's
// size (passes the check), with its window painted over with the wall around it (refused for staging and removal), or
// another room (refused for any kind of job).

const PHOTOS = import.meta.glob(
  ["/test/fixtures/structure/photos/living-room.jpg", "/test/fixtures/structure/photos/office.jpg"],
  { eager: true, query: "?inline", import: "default" },
) as Record<string, string>;

function photoBytes(name: string): Uint8Array<ArrayBuffer> {
  const url = PHOTOS[`/test/fixtures/structure/photos/${name}.jpg`]!;
  return decodeBase64Strict(url.slice(url.indexOf(",") + 1)) as Uint8Array<ArrayBuffer>;
}

export const ROOM_SOURCE = photoBytes("living-room");
const picture = decodeImage(ROOM_SOURCE);
const room = ROOMS.find((r) => r.id === "living-room")!;
/** The source's pixel size (766 x 512). */
export const ROOM_SIZE = { width: picture.width, height: picture.height };

/** The room as the provider answers it: staging 768 x 512, removal 768 x 576 (its samples' sizes). */
export function roomAnswer(kind: "stage" | "removal"): Uint8Array {
  return encodeJpeg(providerSize(picture, 768, kind === "stage" ? 512 : 576, "stretch"), 85);
}

/**
 * The room with its window painted over: a result the check scores over 1 for staging and removal alike, so flagged
 * under production's limits and refused under refuseOverOne's.
 */
export function windowGoneAnswer(kind: "stage" | "removal"): Uint8Array {
  const painted = room.windows.reduce((img, q, i) => paintOver(img, q, 3, i + 1), picture);
  return encodeJpeg(providerSize(painted, 768, kind === "stage" ? 512 : 576, "stretch"), 85);
}

/**
 * Another room (the labelled set's office) at the living room's answer size: what a result sold as the living room
 * but showing another place looks like to the check. Its lines run elsewhere everywhere, so it scores over 1 for
 * every kind, the sky's facade lines included (a window painted over does not: ADR 0330).
 */
export function anotherRoomAnswer(): Uint8Array {
  return encodeJpeg(providerSize(decodeImage(photoBytes("office")), 768, 512, "stretch"), 85);
}

/** Makes the living room the original of `photoId` (its bytes and its size). */
export async function useRoomAsOriginal(photo: { id: string; originalKey: string }): Promise<void> {
  await env.PHOTOS.put(photo.originalKey, ROOM_SOURCE, { httpMetadata: { contentType: "image/jpeg" } });
  await db
    .update(photos)
    .set({ width: ROOM_SIZE.width, height: ROOM_SIZE.height, bytes: ROOM_SOURCE.byteLength })
    .where(eq(photos.id, photo.id));
}

/** The provider answers each call (not the enlargements) with the next picture, one image each; the last repeats. */
export function answerInTurn(provider: ProviderStub, ...pictures: Uint8Array[]): void {
  let next = 0;
  provider.answer = () => [pictures[Math.min(next++, pictures.length - 1)]!];
}

/** Limits that refuse every score over 1: the two-outcome rule of ADR 0162, before ADR 0215 made the check flag. */
export const REFUSE_OVER_ONE = { mark: 1, refuse: 1 };

/**
 * Judges this user's results with REFUSE_OVER_ONE for every kind (production's limits refuse nothing): how a test
 * runs a refusal, through the real queue and check Worker (UserObject.setStructureLimitsForTesting).
 */
export async function refuseOverOne(userId: string): Promise<void> {
  await userObject(env, userId).setStructureLimitsForTesting({
    stage: REFUSE_OVER_ONE,
    removal: REFUSE_OVER_ONE,
    sky: REFUSE_OVER_ONE,
  });
}
