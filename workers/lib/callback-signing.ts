import {
  decodeBase64urlIgnorePadding,
  encodeBase32LowerCaseNoPadding,
  encodeBase64urlNoPadding,
  encodeHexLowerCase,
} from "@oslojs/encoding";
import { hmacSha256 as hmac, timingSafeEqual } from "./crypto";
import { type KeyEnv, type Keyring, keyring, LEGACY_KEY_ID } from "./signing-keys";

// Signed callbacks of the public API, signed the way Stripe signs its webhooks
// (docs/decisions/0120-public-api.md):
//
//   Stagewise-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, `${t}.${body}`)>
//
// The secret belongs to the API key the job was created with, and only to it
// (docs/decisions/0182-signing-keys-rotate.md): 256 random bits made when the key
// is made or its owner rotates it, shown once, and stored sealed (AES-GCM) under
// the current signing key, whose id is stored beside it. Keys made before that
// have no stored secret: theirs is the one derived from SIGNING_SECRET (key "0")
// and the key's id, as it always was, until the daily maintenance stores it
// sealed. Rotating the signing keys reseals; it never changes an integrator's
// secret.

export const SIGNATURE_HEADER = "Stagewise-Signature";
/** A receiver should refuse a signature older than this (replays). */
export const SIGNATURE_TOLERANCE_S = 5 * 60;

/** What api_keys stores of a key's callback secret. */
export interface StoredCallbackSecret {
  /** `<iv>.<ciphertext>` (base64url), or null: the derived secret of a key made before secrets were stored. */
  callbackSecret: string | null;
  /** The id of the signing key it is sealed under. */
  callbackSecretKey: string | null;
}

/** A new callback signing secret (`whsec_…`, 256 random bits). */
export function newCallbackSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return `whsec_${encodeBase32LowerCaseNoPadding(bytes)}`;
}

/** The secret of a key made before secrets were stored: derived from SIGNING_SECRET (key "0") and the key's id. */
export async function derivedCallbackSecret(legacySecret: string, apiKeyId: string): Promise<string> {
  return `whsec_${encodeBase32LowerCaseNoPadding(await hmac(legacySecret, `api-callback-secret:${apiKeyId}`))}`;
}

async function sealingKey(signingSecret: string): Promise<CryptoKey> {
  const raw = await hmac(signingSecret, "api-callback-secret-seal");
  return crypto.subtle.importKey("raw", new Uint8Array(raw), "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** Seals a key's callback secret under the current signing key, bound to the API key's id. */
export async function sealCallbackSecret(
  ring: Keyring,
  apiKeyId: string,
  secret: string,
): Promise<{ callbackSecret: string; callbackSecretKey: string }> {
  const iv = new Uint8Array(12);
  crypto.getRandomValues(iv);
  const enc = new TextEncoder();
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: enc.encode(apiKeyId) },
    await sealingKey(ring.current.secret),
    enc.encode(secret),
  );
  return {
    callbackSecret: `${encodeBase64urlNoPadding(iv)}.${encodeBase64urlNoPadding(new Uint8Array(sealed))}`,
    callbackSecretKey: ring.current.id,
  };
}

/**
 * A key's callback signing secret, or null when it cannot be read: sealed under a signing key no longer listed,
 * or derived from SIGNING_SECRET once that is unset.
 */
export async function openCallbackSecret(
  ring: Keyring,
  apiKeyId: string,
  stored: StoredCallbackSecret,
): Promise<string | null> {
  if (stored.callbackSecret === null) {
    const legacy = ring.byId.get(LEGACY_KEY_ID);
    return legacy ? derivedCallbackSecret(legacy.secret, apiKeyId) : null;
  }
  const key = ring.byId.get(stored.callbackSecretKey ?? "");
  const [iv, sealed] = stored.callbackSecret.split(".");
  if (!key || !iv || !sealed) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: new Uint8Array(decodeBase64urlIgnorePadding(iv)),
        additionalData: new TextEncoder().encode(apiKeyId),
      },
      await sealingKey(key.secret),
      new Uint8Array(decodeBase64urlIgnorePadding(sealed)),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}

/** The callback secret of an API key, from its stored columns and the configured signing keys (null: unreadable). */
export function callbackSecretFor(env: KeyEnv, apiKeyId: string, stored: StoredCallbackSecret): Promise<string | null> {
  return openCallbackSecret(keyring(env), apiKeyId, stored);
}

/** The secrets a key's callback is signed with now: the one it replaced while that still signs, then its own. */
/** Until when the secret a rotation replaced still signs (ADR 0350), or null once it no longer does. */
export function oldSecretSignsUntil(key: { previousCallbackUntil: number | null }, now: number): number | null {
  return key.previousCallbackUntil !== null && key.previousCallbackUntil > now ? key.previousCallbackUntil : null;
}

export async function signingSecrets(
  env: KeyEnv,
  keyId: string,
  key: StoredCallbackSecret & {
    previousCallbackSecret: string | null;
    previousCallbackSecretKey: string | null;
    previousCallbackUntil: number | null;
  },
  now = Date.now(),
): Promise<string[] | null> {
  const ring = keyring(env);
  const current = await openCallbackSecret(ring, keyId, key);
  if (current === null) return null;
  if (oldSecretSignsUntil(key, now) === null) return [current];
  const previous = await openCallbackSecret(ring, keyId, {
    callbackSecret: key.previousCallbackSecret,
    callbackSecretKey: key.previousCallbackSecretKey,
  });
  // The current one last: a receiver that reads only the last v1 (the snippet /developers showed before) checks it.
  return previous === null || previous === current ? [current] : [previous, current];
}

/** Whether the stored secret should be sealed (again) under the current signing key. */
export function needsSealing(ring: Keyring, stored: StoredCallbackSecret): boolean {
  return stored.callbackSecret === null || stored.callbackSecretKey !== ring.current.id;
}

/**
 * The value of the Stagewise-Signature header for `body` sent at `t` (unix seconds): one `v1` per secret, in the order
 * given (ADR 0350), as Stripe's header carries one per secret while a rolled secret expires.
 */
export async function signatureHeader(secrets: string | string[], t: number, body: string): Promise<string> {
  const all = typeof secrets === "string" ? [secrets] : secrets;
  const v1 = await Promise.all(all.map(async (s) => `v1=${encodeHexLowerCase(await hmac(s, `${t}.${body}`))}`));
  return [`t=${t}`, ...v1].join(",");
}

/** Checks a Stagewise-Signature header against the exact body received (what a receiver does). */
export async function verifySignatureHeader(
  secret: string,
  header: string | null,
  body: string,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_S,
): Promise<boolean> {
  if (!header) return false;
  const parts = new Map<string, string[]>();
  for (const item of header.split(",")) {
    const at = item.indexOf("=");
    if (at <= 0) continue;
    const k = item.slice(0, at).trim();
    parts.set(k, [...(parts.get(k) ?? []), item.slice(at + 1).trim()]);
  }
  const t = parts.get("t")?.[0];
  if (!t || !/^\d{1,12}$/.test(t) || Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return false;
  const expected = new TextEncoder().encode(encodeHexLowerCase(await hmac(secret, `${t}.${body}`)));
  return (parts.get("v1") ?? []).some((v) => timingSafeEqual(expected, new TextEncoder().encode(v)));
}
