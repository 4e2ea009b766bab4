import { type KeyEnv, keyring, signMessage, verifyMessage } from "./signing-keys";

// Short-lived signed addresses of our own images, for the provider's
// input_image_url (staging, sky replacement, furniture removal). HMAC-SHA256
// by the current signing key over what the address names (a photo's variant and
// the stored object behind it, a mask, or the provider smoke check's sample) and
// the expiry; the signature names its key, so any key still listed verifies it
// (signing-keys.ts). No cookie needed, and no D1 read when the provider fetches
// a photo's image: the signature vouches for the object's key.
// docs/decisions/0071-signed-image-urls.md, 0182, 0328

export const SIGNED_URL_TTL_MS = 15 * 60 * 1000;

/** What an address may name: a photo's variant, a removal mask of a photo, or a provider smoke check's sample. */
type Scope = "photo" | "mask" | "provider-sample";

const message = (scope: Scope, a: string, b: string, exp: number) => `${scope}:${a}:${b}:${exp}`;

/** What a signed image address names: a photo's variant ("original" or a version id) and the object it is stored as. */
export interface SignedImage {
  photoId: string;
  variant: string;
  /** The R2 key of the bytes; the caller applies the byte rule (ADR 0200) before signing it. */
  key: string;
}

/** The signed message of an image address: the key last, after the expiry's digits, so no field can run into another. */
const imageMessage = (image: SignedImage, exp: number) =>
  `${message("photo", image.photoId, image.variant, exp)}:${image.key}`;

export async function signedImageUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  image: SignedImage,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = await signMessage(keyring(env), imageMessage(image, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  const path = `${encodeURIComponent(image.photoId)}/${encodeURIComponent(image.variant)}`;
  return `${origin}/api/signed/photos/${path}?key=${encodeURIComponent(image.key)}&exp=${exp}&sig=${sig}`;
}

/** What a signed mask address names: a photo's removal mask by its id, and the object it is stored as. */
export interface SignedMask {
  photoId: string;
  maskId: string;
  /** The R2 key of the photo's mask (maskKey in photo-storage.ts). */
  key: string;
}

const maskMessage = (mask: SignedMask, exp: number) => `${message("mask", mask.photoId, mask.maskId, exp)}:${mask.key}`;

/** A signed address of a removal mask of a photo, for the provider's mask_image_url (docs/decisions/0195, 0328). */
export async function signedMaskUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  mask: SignedMask,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = await signMessage(keyring(env), maskMessage(mask, exp));
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  const path = `${encodeURIComponent(mask.photoId)}/masks/${encodeURIComponent(mask.maskId)}`;
  return `${origin}/api/signed/photos/${path}?key=${encodeURIComponent(mask.key)}&exp=${exp}&sig=${sig}`;
}

/** The stored mask a signed mask address vouches for, or null when its signature, key or expiry does not hold. */
export async function verifiedMaskKey(
  env: KeyEnv,
  photoId: string,
  maskId: string,
  query: { key?: string; exp?: string; sig?: string },
  now: number,
): Promise<string | null> {
  const { key, exp, sig } = query;
  if (!key || !exp || !/^\d{1,16}$/.test(exp) || Number(exp) < now) return null;
  const verified = await verifyMessage(keyring(env), maskMessage({ photoId, maskId, key }, Number(exp)), sig);
  return verified ? key : null;
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

/** The stored object a signed image address vouches for, or null when its signature, key or expiry does not hold. */
export async function verifiedImageKey(
  env: KeyEnv,
  photoId: string,
  variant: string,
  query: { key?: string; exp?: string; sig?: string },
  now: number,
): Promise<string | null> {
  const { key, exp, sig } = query;
  if (!key || !exp || !/^\d{1,16}$/.test(exp) || Number(exp) < now) return null;
  const verified = await verifyMessage(keyring(env), imageMessage({ photoId, variant, key }, Number(exp)), sig);
  return verified ? key : null;
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
