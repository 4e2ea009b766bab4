import { type KeyEnv, keyring, signMessage, verifyMessage } from "./signing-keys";

// Short-lived signed addresses of our own images, for the provider's
// input_image_url (staging, sky replacement, furniture removal). HMAC-SHA256
// by the current signing key over what the address names (a photo and its
// variant, or the provider smoke check's sample) and the expiry; the signature
// names its key, so any key still listed verifies it (signing-keys.ts). No
// cookie needed. docs/decisions/0071-signed-image-urls.md, 0182

export const SIGNED_URL_TTL_MS = 15 * 60 * 1000;

/** What an address may name: a photo's variant, a removal mask of a photo, or a provider smoke check's sample. */
type Scope = "photo" | "mask" | "provider-sample";

const message = (scope: Scope, a: string, b: string, exp: number) => `${scope}:${a}:${b}:${exp}`;

export async function signedImageUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  photoId: string,
  variant: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = await signMessage(keyring(env), message("photo", photoId, variant, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/signed/photos/${encodeURIComponent(photoId)}/${encodeURIComponent(variant)}?exp=${exp}&sig=${sig}`;
}

/** A signed address of a removal mask of a photo, for the provider's mask_image_url (docs/decisions/0195). */
export async function signedMaskUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  photoId: string,
  maskId: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = await signMessage(keyring(env), message("mask", photoId, maskId, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/signed/photos/${encodeURIComponent(photoId)}/masks/${encodeURIComponent(maskId)}?exp=${exp}&sig=${sig}`;
}

export function verifyMaskSignature(
  env: KeyEnv,
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
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  name: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = await signMessage(keyring(env), message("provider-sample", name, "", exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return `${origin}/api/health/provider-sample/${encodeURIComponent(name)}?exp=${exp}&sig=${sig}`;
}

export function verifySampleSignature(
  env: KeyEnv,
  name: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  return verify(env, "provider-sample", name, "", exp, sig, now);
}

export function verifySignature(
  env: KeyEnv,
  photoId: string,
  variant: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  return verify(env, "photo", photoId, variant, exp, sig, now);
}

async function verify(
  env: KeyEnv,
  scope: Scope,
  a: string,
  b: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  if (!exp || !/^\d{1,16}$/.test(exp) || Number(exp) < now) return false;
  return verifyMessage(keyring(env), message(scope, a, b, Number(exp)), sig);
}
