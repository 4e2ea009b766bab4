import { decodeHex, encodeHexLowerCase } from "@oslojs/encoding";
import { hmacSha256 as mac, timingSafeEqual } from "./crypto";

// Expiring signed links for things mailed to a person (a data export):
// HMAC-SHA256 with SIGNING_SECRET over a purpose, an id and the expiry.

export async function signLink(secret: string, purpose: string, id: string, exp: number): Promise<string> {
  return encodeHexLowerCase(await mac(secret, `${purpose}:${id}:${exp}`));
}

export async function verifyLink(
  secret: string,
  purpose: string,
  id: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  if (!exp || !sig || !/^\d{1,16}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return false;
  if (Number(exp) < now) return false;
  return timingSafeEqual(await mac(secret, `${purpose}:${id}:${exp}`), decodeHex(sig));
}
