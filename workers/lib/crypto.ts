import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase32LowerCaseNoPadding, encodeHexLowerCase } from "@oslojs/encoding";

/** A random, URL-safe identifier carrying `bytes * 8` bits of entropy (default 160). */
export function randomToken(bytes = 20): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return encodeBase32LowerCaseNoPadding(buf);
}

/**
 * An identifier derived from a person's request key: the first 32 base32 letters (randomToken's shape) of
 * SHA-256(`scope:userId:key`). The same key from the same person names the same row, so a request sent twice finds
 * what its first sending wrote; the user's id in the hash means one person's key never names another person's row.
 */
export function keyedToken(scope: string, userId: string, key: string): string {
  return encodeBase32LowerCaseNoPadding(sha256(new TextEncoder().encode(`${scope}:${userId}:${key}`))).slice(0, 32);
}

export function sha256Hex(value: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(value)));
}

/** HMAC-SHA256 of `data` (UTF-8) under `secret` (UTF-8): signed image URLs, mailed links and API callbacks. */
export async function hmacSha256(secret: string, data: string): Promise<Uint8Array> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(data)));
}

/** Constant-time comparison of two equal-length byte arrays. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}
