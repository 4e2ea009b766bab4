import { encodeHexLowerCase } from "@oslojs/encoding";
import { hmacSha256 } from "@workers/lib/crypto";
import { signLink, verifyLink } from "@workers/lib/signed-links";
import { signedImageUrl, verifiedKey } from "@workers/lib/signed-urls";
import { keyring, keyringProblems } from "@workers/lib/signing-keys";
import { describe, expect, it } from "vitest";

// Signing keys carry an id; the first key of SIGNING_KEYS signs, every key listed verifies, and SIGNING_SECRET is
// key "0" (docs/decisions/0182-signing-keys-rotate.md). A rotation, step by step, as the runbook does it.

const S0 = "legacy-secret-0000000000000000000000";
const S1 = "first-key-secret-11111111111111111111";
const S2 = "second-key-secret-2222222222222222222";
const S3 = "third-key-secret-33333333333333333333";
const ORIGIN = { APP_ORIGIN: "https://stagewise.example.com" };
/** Today: one SIGNING_SECRET. */
const before = { ...ORIGIN, SIGNING_SECRET: S0 };
/** First rotation: a new key signs, the old secret still verifies. */
const rotated = { ...ORIGIN, SIGNING_KEYS: `k1:${S1}`, SIGNING_SECRET: S0 };
/** Second rotation, SIGNING_SECRET removed: k2 signs, k1 verifies. */
const again = { ...ORIGIN, SIGNING_KEYS: `k2:${S2},k1:${S1}` };
/** Third: k1 removed. */
const later = { ...ORIGIN, SIGNING_KEYS: `k3:${S3},k2:${S2}` };
const now = Date.now();

/** The image every address here names: p1's original, stored as KEY. */
const KEY = "photos/u1/p1/original";
const P1 = { photoId: "p1", variant: "original", key: KEY };

function parts(url: string) {
  const u = new URL(url);
  const [, , , , id, variant] = u.pathname.split("/");
  const query = { key: u.searchParams.get("key") ?? undefined, exp: u.searchParams.get("exp") ?? undefined };
  return [id!, variant!, query, u.searchParams.get("sig") ?? undefined] as const;
}
const verifies = async (env: object, id: string, variant: string, query: object, sig: string | undefined, at = now) =>
  (await verifiedKey(env, "photo", id, variant, { ...query, sig }, at)) !== null;
const opens = async (env: object, url: string) => {
  const [id, variant, query, sig] = parts(url);
  return verifies(env, id, variant, query, sig);
};

describe("signed photo addresses across a key rotation", () => {
  it("an address signed before a rotation opens while its key is listed, and not once it is removed", async () => {
    // An address as the code before key ids made it: bare hex by SIGNING_SECRET.
    const exp = now + 60_000;
    const bare = encodeHexLowerCase(await hmacSha256(S0, `photo:p1:original:${exp}:${KEY}`));
    const legacy = `${ORIGIN.APP_ORIGIN}/api/signed/photos/p1/original?key=${KEY}&exp=${exp}&sig=${bare}`;
    const byK1 = await signedImageUrl(rotated, P1, now);
    expect(new URL(byK1).searchParams.get("sig")).toMatch(/^k1\.[0-9a-f]{64}$/);

    expect(await opens(before, legacy)).toBe(true);
    expect(await opens(rotated, legacy)).toBe(true);
    expect(await opens(rotated, byK1)).toBe(true);
    expect(await opens(again, byK1)).toBe(true);
    // Removed keys: SIGNING_SECRET unset, then k1 dropped from the list.
    expect(await opens(again, legacy)).toBe(false);
    expect(await opens(later, byK1)).toBe(false);
    expect(await opens(later, await signedImageUrl(later, P1, now))).toBe(true);
  });

  it("a signature names its key: another listed key's id, another photo or a later expiry do not verify", async () => {
    const url = await signedImageUrl(again, P1, now);
    const [id, variant, query, sig] = parts(url);
    expect(await verifiedKey(again, "photo", id, variant, { ...query, sig }, now)).toBe(KEY);
    expect(await verifies(again, id, variant, query, sig!.replace(/^k2\./, "k1."))).toBe(false);
    expect(await verifies(again, id, variant, query, sig!.replace(/^k2\./, ""))).toBe(false);
    expect(await verifies(again, "p2", variant, query, sig)).toBe(false);
    expect(await verifies(again, id, "v1", query, sig)).toBe(false);
    expect(await verifies(again, id, variant, { ...query, exp: String(Number(query.exp) + 1) }, sig)).toBe(false);
    expect(await verifies(again, id, variant, query, sig, Number(query.exp) + 1)).toBe(false);
    // The key is signed: the same signature does not open another stored object, nor an address without it.
    expect(await verifies(again, id, variant, { ...query, key: "photos/u2/p9/original" }, sig)).toBe(false);
    expect(await verifies(again, id, variant, { ...query, key: `${KEY}x` }, sig)).toBe(false);
    expect(await verifies(again, id, variant, { exp: query.exp }, sig)).toBe(false);
  });
});

describe("mailed links across a key rotation", () => {
  it("a link signed before opens while its key is listed; signed with a removed key it does not", async () => {
    const exp = now + 24 * 3_600_000;
    const old = await signLink(rotated, "export", "e1", exp);
    expect(await verifyLink(again, "export", "e1", String(exp), old, now)).toBe(true);
    expect(await verifyLink(later, "export", "e1", String(exp), old, now)).toBe(false);
    expect(await verifyLink(again, "export", "e2", String(exp), old, now)).toBe(false);
  });
});

describe("the configured keys", () => {
  it("the first listed key signs; SIGNING_SECRET is key 0 and signs only alone", () => {
    expect(keyring(rotated).current.id).toBe("k1");
    expect([...keyring(rotated).byId.keys()]).toEqual(["k1", "0"]);
    expect(keyring(before).current.id).toBe("0");
  });

  it("names what is wrong with them", () => {
    expect(keyringProblems({})).toEqual(["SIGNING_KEYS is not set"]);
    expect(keyringProblems({ SIGNING_KEYS: "just-a-secret" })).toEqual([
      "SIGNING_KEYS must be id:secret pairs separated by commas, each id 1-16 of a-z and 0-9",
    ]);
    expect(keyringProblems({ SIGNING_KEYS: `k1:${S1},k1:${S2}` })).toEqual(["SIGNING_KEYS lists the key id k1 twice"]);
    expect(keyringProblems({ SIGNING_KEYS: `0:${S1}`, SIGNING_SECRET: S0 })).toEqual([
      "SIGNING_KEYS may not use the id 0 while SIGNING_SECRET is set (it is key 0)",
    ]);
    expect(keyringProblems({ SIGNING_KEYS: "k1:short", SIGNING_SECRET: "short" }, 32)).toEqual([
      "SIGNING_KEYS key k1 must be at least 32 characters",
      "SIGNING_SECRET must be at least 32 characters",
    ]);
    expect(() => keyring({ SIGNING_KEYS: "K1:x" })).toThrow("SIGNING_KEYS must be id:secret pairs");
  });
});
