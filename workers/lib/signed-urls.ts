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

/** What is signed: the scope, what the address names, its expiry and, for a stored object, its key last (after the
 * expiry's digits, so no field can run into another). */
const message = (scope: Scope, a: string, b: string, exp: number, key?: string) =>
  `${scope}:${a}:${b}:${exp}${key === undefined ? "" : `:${key}`}`;

/** What a signed image address names: a photo's variant ("original" or a version id) and the object it is stored as. */
export interface SignedImage {
  photoId: string;
  variant: string;
  /** The R2 key of the bytes; the caller applies the byte rule (ADR 0200) before signing it. */
  key: string;
}

/** What a signed mask address names: a photo's removal mask by its id, and the object it is stored as. */
export interface SignedMask {
  photoId: string;
  maskId: string;
  /** The R2 key of the photo's mask (maskKey in photo-storage.ts). */
  key: string;
}

/** What a signed address carries in its query. */
type SignedQuery = { key?: string; exp?: string; sig?: string };

/** An address of ours at `path`, signed over `scope`, `a`, `b` and (for a stored object) its key, for `ttlMs`. */
async function signedAddress(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  path: string,
  signed: { scope: Scope; a: string; b: string; key?: string },
  now: number,
  ttlMs: number,
): Promise<string> {
  const exp = now + ttlMs;
  const sig = await signMessage(keyring(env), message(signed.scope, signed.a, signed.b, exp, signed.key));
  const key = signed.key === undefined ? "" : `key=${encodeURIComponent(signed.key)}&`;
  return `${env.APP_ORIGIN.replace(/\/$/, "")}${path}?${key}exp=${exp}&sig=${sig}`;
}

/**
 * The stored object a signed address vouches for: an image's ("photo": the photo and its variant) or a removal mask's
 * ("mask": the photo and the mask's id). Its key when the signature over it and the expiry hold, else null.
 */
export async function verifiedKey(
  env: KeyEnv,
  scope: "photo" | "mask",
  a: string,
  b: string,
  query: SignedQuery,
  now: number,
): Promise<string | null> {
  const { key, exp, sig } = query;
  return key && (await verify(env, scope, a, b, exp, sig, now, key)) ? key : null;
}

export function signedImageUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  image: SignedImage,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const path = `/api/signed/photos/${encodeURIComponent(image.photoId)}/${encodeURIComponent(image.variant)}`;
  return signedAddress(env, path, { scope: "photo", a: image.photoId, b: image.variant, key: image.key }, now, ttlMs);
}

/** A signed address of a removal mask of a photo, for the provider's mask_image_url (docs/decisions/0195, 0328). */
export function signedMaskUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  mask: SignedMask,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const path = `/api/signed/photos/${encodeURIComponent(mask.photoId)}/masks/${encodeURIComponent(mask.maskId)}`;
  return signedAddress(env, path, { scope: "mask", a: mask.photoId, b: mask.maskId, key: mask.key }, now, ttlMs);
}

/** A signed address of a provider smoke check's sample image, by its stored name. */
export function signedSampleUrl(
  env: KeyEnv & Pick<Env, "APP_ORIGIN">,
  name: string,
  now: number,
  ttlMs = SIGNED_URL_TTL_MS,
): Promise<string> {
  const path = `/api/health/provider-sample/${encodeURIComponent(name)}`;
  return signedAddress(env, path, { scope: "provider-sample", a: name, b: "" }, now, ttlMs);
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

async function verify(
  env: KeyEnv,
  scope: Scope,
  a: string,
  b: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
  key?: string,
): Promise<boolean> {
  if (!exp || !/^\d{1,16}$/.test(exp) || Number(exp) < now) return false;
  return verifyMessage(keyring(env), message(scope, a, b, Number(exp), key), sig);
}
