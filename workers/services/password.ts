import { decodeBase64, encodeBase64 } from "@oslojs/encoding";
import { timingSafeEqual } from "@workers/lib/crypto";

// PBKDF2-SHA-256 through WebCrypto: the only password KDF that runs natively in
// workerd. Production Workers refuse more than 100,000 iterations; local workerd
// does not, so the cap is enforced here. The parameters live inside each hash
// ("pbkdf2-sha256$<iterations>$<salt>$<hash>") so they can be raised later and
// old hashes still verify. See docs/decisions/0010-password-hashing.md.
export const PBKDF2_MAX_ITERATIONS = 100_000;
export const PBKDF2_ITERATIONS = 100_000;
const KEY_BITS = 256;

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  if (iterations > PBKDF2_MAX_ITERATIONS) {
    throw new Error(`PBKDF2 iterations ${iterations} exceed the Workers cap of ${PBKDF2_MAX_ITERATIONS}`);
  }
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations },
    key,
    KEY_BITS,
  );
  return new Uint8Array(bits);
}

export async function hashPassword(password: string, iterations = PBKDF2_ITERATIONS): Promise<string> {
  const salt = new Uint8Array(16);
  crypto.getRandomValues(salt);
  const hash = await derive(password, salt, iterations);
  return `pbkdf2-sha256$${iterations}$${encodeBase64(salt)}$${encodeBase64(hash)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iter, saltB64, hashB64] = stored.split("$");
  if (scheme !== "pbkdf2-sha256" || !iter || !saltB64 || !hashB64) return false;
  const iterations = Number(iter);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > PBKDF2_MAX_ITERATIONS) return false;
  const expected = decodeBase64(hashB64);
  const actual = await derive(password, decodeBase64(saltB64), iterations);
  return timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with weaker parameters than today's and should be redone on next sign-in. */
export function needsRehash(stored: string): boolean {
  const [scheme, iter] = stored.split("$");
  return scheme !== "pbkdf2-sha256" || Number(iter) < PBKDF2_ITERATIONS;
}

// A fixed hash to verify against when the account does not exist, so that an
// unknown e-mail costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword("not-a-real-password-only-for-timing");
  return dummyHash;
}
