import { type KeyEnv, keyring, signMessage, verifyMessage } from "./signing-keys";

// Expiring signed links for things mailed to a person (a data export): HMAC-SHA256 by the current signing key over
// a purpose, an id and the expiry; the signature names its key, so a link mailed before a key rotation opens while
// that key is still listed (signing-keys.ts, docs/decisions/0182-signing-keys-rotate.md).

export function signLink(env: KeyEnv, purpose: string, id: string, exp: number): Promise<string> {
  return signMessage(keyring(env), `${purpose}:${id}:${exp}`);
}

export async function verifyLink(
  env: KeyEnv,
  purpose: string,
  id: string,
  exp: string | undefined,
  sig: string | undefined,
  now: number,
): Promise<boolean> {
  if (!exp || !/^\d{1,16}$/.test(exp) || Number(exp) < now) return false;
  return verifyMessage(keyring(env), `${purpose}:${id}:${exp}`, sig);
}
