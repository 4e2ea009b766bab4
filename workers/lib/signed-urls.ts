import { decodeHex, encodeHexLowerCase } from "@oslojs/encoding";
import { hmacSha256, timingSafeEqual } from "./crypto";

// Short-lived signed addresses of our own images, for the provider's
// input_image_url (sky replacement, furniture removal). HMAC-SHA256 with
// SIGNING_SECRET over the photo, the variant and the expiry; no cookie needed.
// docs/decisions/0071-signed-image-urls.md

export const SIGNED_URL_TTL_MS = 15 * 60 * 1000;

function mac(secret: string, photoId: string, variant: string, exp: number): Promise<Uint8Array> {
  return hmacSha256(secret, `photo:${photoId}:${variant}:${exp}`);
}

function secretOf(env: Pick<Env, "SIGNING_SECRET">): string {
  if (!env.SIGNING_SECRET) throw new Error("SIGNING_SECRET is not configured");
  return env.SIGNING_SECRET;
}

export async function signedImageUrl(
  env: Pick<Env, "SIGNING_SECRET" | "APP_ORIGIN">,
  photoId: string,
  variant: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = encodeHexLowerCase(await mac(secretOf(env), photoId, variant, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/signed/photos/${encodeURIComponent(photoId)}/${encodeURIComponent(variant)}?exp=${exp}&sig=${sig}`;
}

export async function verifySignature(
  env: Pick<Env, "SIGNING_SECRET">,
  photoId: string,
  variant: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  if (!exp || !sig || !/^\d{1,16}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return false;
  const expires = Number(exp);
  if (expires < now) return false;
  const expected = await mac(secretOf(env), photoId, variant, expires);
  return timingSafeEqual(expected, decodeHex(sig));
}
