import { decodeHex, encodeHexLowerCase } from "@oslojs/encoding";
import { timingSafeEqual } from "./crypto";

// Expiring signed links for things mailed to a person (a data export):
// HMAC-SHA256 with SIGNING_SECRET over a purpose, an id and the expiry.

async function mac(secret: string, value: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(value)));
}

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
