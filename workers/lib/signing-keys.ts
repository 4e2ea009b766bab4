import { decodeHex, encodeHexLowerCase } from "@oslojs/encoding";
import { hmacSha256, timingSafeEqual } from "./crypto";

// The keys that sign what we hand out (photo addresses the provider fetches, mailed links) and verify what comes
// back, so that a key can be replaced without breaking what is in flight (docs/decisions/0182-signing-keys-rotate.md):
//
//   SIGNING_KEYS   = "k2:<secret>,k1:<secret>"   the first key signs; every key listed verifies
//   SIGNING_SECRET = "<secret>"                  the key before ids existed, id "0": it verifies, and signs only when
//                                                SIGNING_KEYS is unset
//
// A signature names its key: "<id>.<64 hex>". One without an id was made by key "0" before this existed, so links
// signed then still open while SIGNING_SECRET is set. A signature by a key no longer listed does not verify.

export const LEGACY_KEY_ID = "0";
export const KEY_ID = /^[a-z0-9]{1,16}$/;
const TOKEN = /^(?:([a-z0-9]{1,16})\.)?([0-9a-f]{64})$/;

export interface SigningKey {
  id: string;
  secret: string;
}
export interface Keyring {
  /** The key that signs. */
  current: SigningKey;
  /** Every key that verifies, by id (the current one included). */
  byId: ReadonlyMap<string, SigningKey>;
}
/** The settings the keys come from (SIGNING_KEYS is typed as set, but a deployed worker may have only the other). */
export type KeyEnv = { SIGNING_KEYS?: string; SIGNING_SECRET?: string };

/** What is wrong with the configured keys ([] when they are fine), for the configuration check. */
export function keyringProblems(env: KeyEnv, minLength = 1): string[] {
  const problems: string[] = [];
  const listed = (env.SIGNING_KEYS ?? "").trim();
  const seen = new Set<string>();
  if (listed) {
    for (const entry of listed.split(",")) {
      const at = entry.indexOf(":");
      const id = entry.slice(0, at).trim();
      const secret = entry.slice(at + 1).trim();
      if (at < 0 || !KEY_ID.test(id)) {
        problems.push("SIGNING_KEYS must be id:secret pairs separated by commas, each id 1-16 of a-z and 0-9");
        continue;
      }
      if (seen.has(id)) problems.push(`SIGNING_KEYS lists the key id ${id} twice`);
      if (id === LEGACY_KEY_ID && env.SIGNING_SECRET) {
        problems.push(`SIGNING_KEYS may not use the id ${LEGACY_KEY_ID} while SIGNING_SECRET is set (it is key 0)`);
      }
      if (secret.length < minLength) problems.push(`SIGNING_KEYS key ${id} must be at least ${minLength} characters`);
      seen.add(id);
    }
  }
  if (env.SIGNING_SECRET !== undefined && env.SIGNING_SECRET.length < minLength) {
    problems.push(`SIGNING_SECRET must be at least ${minLength} characters`);
  }
  if (!listed && !env.SIGNING_SECRET) problems.push("SIGNING_KEYS is not set");
  return problems;
}

const rings = new Map<string, Keyring>();

/** The configured keys (parsed once per value). Throws when none is configured or the list is malformed. */
export function keyring(env: KeyEnv): Keyring {
  const cacheKey = `${env.SIGNING_KEYS ?? ""}\n${env.SIGNING_SECRET ?? ""}`;
  const cached = rings.get(cacheKey);
  if (cached) return cached;
  const problems = keyringProblems(env);
  if (problems.length > 0) throw new Error(problems.join("; "));
  const keys: SigningKey[] = (env.SIGNING_KEYS ?? "")
    .split(",")
    .filter((e) => e.trim())
    .map((e) => ({ id: e.slice(0, e.indexOf(":")).trim(), secret: e.slice(e.indexOf(":") + 1).trim() }));
  if (env.SIGNING_SECRET) keys.push({ id: LEGACY_KEY_ID, secret: env.SIGNING_SECRET });
  const ring: Keyring = { current: keys[0]!, byId: new Map(keys.map((k) => [k.id, k])) };
  rings.set(cacheKey, ring);
  return ring;
}

/** `<key id>.<hex HMAC-SHA256(current key, message)>`. */
export async function signMessage(ring: Keyring, message: string): Promise<string> {
  return `${ring.current.id}.${encodeHexLowerCase(await hmacSha256(ring.current.secret, message))}`;
}

/** Whether `token` is the signature of `message` by a key still listed (no id: key "0"). */
export async function verifyMessage(ring: Keyring, message: string, token: string | undefined): Promise<boolean> {
  const m = TOKEN.exec(token ?? "");
  const key = m ? ring.byId.get(m[1] ?? LEGACY_KEY_ID) : undefined;
  if (!m || !key) return false;
  return timingSafeEqual(await hmacSha256(key.secret, message), decodeHex(m[2]!));
}
