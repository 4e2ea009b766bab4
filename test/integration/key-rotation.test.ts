import { env } from "cloudflare:workers";
import { encodeHexLowerCase } from "@oslojs/encoding";
import { signedIn } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { workerFetch } from "@test/support/worker";
import { hmacSha256 } from "@workers/lib/crypto";
import { signedImageUrl } from "@workers/lib/signed-urls";
import { describe, expect, it } from "vitest";

// Secrets that rotate (issue 36 part 4, docs/decisions/0182-signing-keys-rotate.md). The Worker under test runs
// mid-rotation: SIGNING_KEYS = "t2:…,t1:…" (t2 signs, t1 verifies) and SIGNING_SECRET (key "0", verifies).

const T1 = "test-signing-key-one-not-for-production";
describe("signed addresses across a signing key rotation (through the Worker)", () => {
  it("an address signed before the rotation still opens; one signed with a removed key does not", async () => {
    const user = await signedIn();
    const photo = await makePhoto(user.id);
    const now = Date.now();
    const opens = async (url: string) => {
      const res = await workerFetch(url);
      await res.arrayBuffer();
      return res.status;
    };
    // Signed while t1 was the current key (before t2 was added in front of it).
    expect(await opens(await signedImageUrl({ ...env, SIGNING_KEYS: `t1:${T1}` }, photo.id, "original", now))).toBe(
      200,
    );
    // Signed by the code before key ids: bare hex by SIGNING_SECRET, still configured as key "0".
    const exp = now + 60_000;
    const bare = encodeHexLowerCase(await hmacSha256(env.SIGNING_SECRET!, `photo:${photo.id}:original:${exp}`));
    expect(await opens(`/api/signed/photos/${photo.id}/original?exp=${exp}&sig=${bare}`)).toBe(200);
    // Signed with a key that is no longer listed (t0, removed at an earlier rotation).
    const removed = { ...env, SIGNING_KEYS: "t0:test-signing-key-zero-removed-long-ago", SIGNING_SECRET: undefined };
    expect(await opens(await signedImageUrl(removed, photo.id, "original", now))).toBe(403);
    // What the Worker signs now names t2.
    const current = await signedImageUrl(env, photo.id, "original", now);
    expect(new URL(current).searchParams.get("sig")).toMatch(/^t2\./);
    expect(await opens(current)).toBe(200);
  });
});
