import { encodeBase32LowerCaseNoPadding, encodeHexLowerCase } from "@oslojs/encoding";
import { hmacSha256 as hmac, timingSafeEqual } from "./crypto";

// Signed callbacks of the public API, signed the way Stripe signs its webhooks
// (docs/decisions/0120-public-api.md):
//
//   Stagewise-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, `${t}.${body}`)>
//
// The secret belongs to the API key the job was created with. It is derived
// from SIGNING_SECRET and the key's id, so it is shown once (at key creation)
// and never stored.

export const SIGNATURE_HEADER = "Stagewise-Signature";
/** A receiver should refuse a signature older than this (replays). */
export const SIGNATURE_TOLERANCE_S = 5 * 60;

/** The callback signing secret of one API key (`whsec_…`). */
export async function callbackSecret(signingSecret: string | undefined, apiKeyId: string): Promise<string> {
  if (!signingSecret) throw new Error("SIGNING_SECRET is not configured");
  const mac = await hmac(signingSecret, `api-callback-secret:${apiKeyId}`);
  return `whsec_${encodeBase32LowerCaseNoPadding(mac)}`;
}

/** The value of the Stagewise-Signature header for `body` sent at `t` (unix seconds). */
export async function signatureHeader(secret: string, t: number, body: string): Promise<string> {
  return `t=${t},v1=${encodeHexLowerCase(await hmac(secret, `${t}.${body}`))}`;
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
