import { decodeHex, encodeHexLowerCase } from "@oslojs/encoding";
import { hmacSha256, timingSafeEqual } from "./crypto";

// Short-lived signed addresses of our own images, for the provider's
// input_image_url (staging, sky replacement, furniture removal). HMAC-SHA256
// with SIGNING_SECRET over what the address names (a photo and its variant, or
// the provider smoke check's sample) and the expiry; no cookie needed.
// docs/decisions/0071-signed-image-urls.md

export const SIGNED_URL_TTL_MS = 15 * 60 * 1000;

/** What an address may name: a photo's variant, a removal mask of a photo, or a provider smoke check's sample. */
type Scope = "photo" | "mask" | "provider-sample";

function mac(secret: string, scope: Scope, a: string, b: string, exp: number): Promise<Uint8Array> {
  return hmacSha256(secret, `${scope}:${a}:${b}:${exp}`);
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
  const sig = encodeHexLowerCase(await mac(secretOf(env), "photo", photoId, variant, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/signed/photos/${encodeURIComponent(photoId)}/${encodeURIComponent(variant)}?exp=${exp}&sig=${sig}`;
}

/** A signed address of a removal mask of a photo, for the provider's mask_image_url (docs/decisions/0195). */
export async function signedMaskUrl(
  env: Pick<Env, "SIGNING_SECRET" | "APP_ORIGIN">,
  photoId: string,
  maskId: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = encodeHexLowerCase(await mac(secretOf(env), "mask", photoId, maskId, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/signed/photos/${encodeURIComponent(photoId)}/masks/${encodeURIComponent(maskId)}?exp=${exp}&sig=${sig}`;
}

export function verifyMaskSignature(
  env: Pick<Env, "SIGNING_SECRET">,
  photoId: string,
  maskId: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  return verify(env, "mask", photoId, maskId, exp, sig, now);
}

/** A signed address of a provider smoke check's sample image, by its stored name. */
export async function signedSampleUrl(
  env: Pick<Env, "SIGNING_SECRET" | "APP_ORIGIN">,
  name: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = encodeHexLowerCase(await mac(secretOf(env), "provider-sample", name, "", exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/health/provider-sample/${encodeURIComponent(name)}?exp=${exp}&sig=${sig}`;
}

export function verifySampleSignature(
  env: Pick<Env, "SIGNING_SECRET">,
  name: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  return verify(env, "provider-sample", name, "", exp, sig, now);
}

export function verifySignature(
  env: Pick<Env, "SIGNING_SECRET">,
  photoId: string,
  variant: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  return verify(env, "photo", photoId, variant, exp, sig, now);
}

async function verify(
  env: Pick<Env, "SIGNING_SECRET">,
  scope: Scope,
  a: string,
  b: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  if (!exp || !sig || !/^\d{1,16}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return false;
  const expires = Number(exp);
  if (expires < now) return false;
  const expected = await mac(secretOf(env), scope, a, b, expires);
  return timingSafeEqual(expected, decodeHex(sig));
}
