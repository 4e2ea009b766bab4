import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { apiCallbacks, apiKeys } from "@db/schema";
import { encodeHexLowerCase } from "@oslojs/encoding";
import { makeJpeg } from "@test/fixtures/images";
import { db, makeUser, signedIn } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { takeConsoleErrors } from "@test/support/setup";
import { signedAddressOf } from "@test/support/signed";
import { workerFetch } from "@test/support/worker";
import {
  callbackSecretFor,
  derivedCallbackSecret,
  SIGNATURE_HEADER,
  verifySignatureHeader,
} from "@workers/lib/callback-signing";
import { hmacSha256 } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/user-object";
import { createApiKey, revokeApiKey } from "@workers/services/api-keys";
import {
  CALLBACK_SECRET_OVERLAP_MS,
  endPreviousCallbackSecret,
  resealCallbackSecrets,
  rotateCallbackSecret,
} from "@workers/services/callback-secrets";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// Secrets that rotate (issue 36 part 4, docs/decisions/0182-signing-keys-rotate.md). The Worker under test runs
// mid-rotation: SIGNING_KEYS = "t2:…,t1:…" (t2 signs, t1 verifies) and SIGNING_SECRET (key "0", verifies).

const T1 = "test-signing-key-one-not-for-production";
const RESULT = makeJpeg(64, 48, 80);
let received: { url: string; headers: Headers; body: string }[] = [];

beforeEach(() => {
  received = [];
  const provider = stubProvider(async (req) => {
    if (!req.url.startsWith("http://hooks.example.com/")) return null;
    received.push({ url: req.url, headers: req.headers, body: await req.text() });
    return new Response("ok");
  });
  provider.answer = () => [RESULT];
});

const deps = { db, env, clock: () => Date.now() };

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
    expect(
      await opens(await signedAddressOf(photo.id, "original", now, undefined, { ...env, SIGNING_KEYS: `t1:${T1}` })),
    ).toBe(200);
    // Signed by the code before key ids: bare hex by SIGNING_SECRET, still configured as key "0".
    const exp = now + 60_000;
    const key = photo.originalKey;
    const bare = encodeHexLowerCase(await hmacSha256(env.SIGNING_SECRET!, `photo:${photo.id}:original:${exp}:${key}`));
    expect(await opens(`/api/signed/photos/${photo.id}/original?key=${key}&exp=${exp}&sig=${bare}`)).toBe(200);
    // Signed with a key that is no longer listed (t0, removed at an earlier rotation).
    const removed = { ...env, SIGNING_KEYS: "t0:test-signing-key-zero-removed-long-ago", SIGNING_SECRET: undefined };
    expect(await opens(await signedAddressOf(photo.id, "original", now, undefined, removed))).toBe(403);
    // What the Worker signs now names t2.
    const current = await signedAddressOf(photo.id, "original", now);
    expect(new URL(current).searchParams.get("sig")).toMatch(/^t2\./);
    expect(await opens(current)).toBe(200);
  });
});

/** Starts a job through the public API with a callback, and waits for its delivery. */
async function callbackOf(token: string, userId: string, hook: string) {
  const photo = await makePhoto(userId);
  const res = await workerFetch(`/api/v1/photos/${photo.id}/jobs`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      kind: "stage",
      roomType: "Bedroom",
      designStyle: "Scandinavian",
      callbackUrl: `http://hooks.example.com/${hook}`,
    }),
  });
  expect(res.status).toBe(202);
  const { job } = (await res.json()) as { job: { id: string } };
  const stub = userObject(env, userId);
  for (let i = 0; i < 200; i++) {
    const got = received.find((r) => r.url.endsWith(`/${hook}`));
    if (got) return { ...got, jobId: job.id };
    if (i % 10 === 9) await runDurableObjectAlarm(stub);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no callback reached /${hook}`);
}

const verifies = (secret: string, cb: { headers: Headers; body: string }) =>
  verifySignatureHeader(secret, cb.headers.get(SIGNATURE_HEADER), cb.body, Math.floor(Date.now() / 1000));

const whole = (id: string) =>
  db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.id, id))
    .get()
    .then((r) => r!);
const stored = (id: string) =>
  db
    .select({ callbackSecret: apiKeys.callbackSecret, callbackSecretKey: apiKeys.callbackSecretKey })
    .from(apiKeys)
    .where(eq(apiKeys.id, id))
    .get()
    .then((r) => r!);

describe("each API key's own callback secret", () => {
  it("rotating one key's secret changes its callbacks' signature and leaves another key's callbacks alone", async () => {
    const user = await makeUser({ credits: 4 });
    const a = await createApiKey(deps, user.id, { name: "A", scopes: ["stage", "read"] });
    const b = await createApiKey(deps, user.id, { name: "B", scopes: ["stage", "read"] });
    if (!a.ok || !b.ok) throw new Error("keys");
    expect(a.callbackSecret).not.toBe(b.callbackSecret);
    const bStored = await stored(b.key.id);
    expect(bStored.callbackSecretKey).toBe("t2");

    const rotated = await rotateCallbackSecret(deps, user.id, a.key.id);
    if (!rotated.ok) throw new Error(rotated.error);
    expect(rotated.name).toBe("A");
    expect(rotated.callbackSecret).toMatch(/^whsec_[a-z2-7]{52}$/);
    expect(rotated.callbackSecret).not.toBe(a.callbackSecret);
    expect(await stored(b.key.id)).toEqual(bStored);

    // For a day the old secret signs beside the new one (ADR 0350): a receiver still on it misses nothing.
    expect(rotated.previousUntil).toBeGreaterThan(Date.now() + CALLBACK_SECRET_OVERLAP_MS - 60_000);
    const fromA = await callbackOf(a.token, user.id, "a");
    expect(fromA.headers.get(SIGNATURE_HEADER)?.match(/v1=/g)).toHaveLength(2);
    expect(await verifies(rotated.callbackSecret, fromA)).toBe(true);
    expect(await verifies(a.callbackSecret, fromA)).toBe(true);
    const fromB = await callbackOf(b.token, user.id, "b");
    expect(fromB.headers.get(SIGNATURE_HEADER)?.match(/v1=/g)).toHaveLength(1);
    expect(await verifies(b.callbackSecret, fromB)).toBe(true);
    expect(await verifies(a.callbackSecret, fromB)).toBe(false);

    // Once the day is over, only the new one signs.
    await db
      .update(apiKeys)
      .set({ previousCallbackUntil: Date.now() - 1 })
      .where(eq(apiKeys.id, a.key.id));
    const later = await callbackOf(a.token, user.id, "a-later");
    expect(later.headers.get(SIGNATURE_HEADER)?.match(/v1=/g)).toHaveLength(1);
    expect(await verifies(rotated.callbackSecret, later)).toBe(true);
    expect(await verifies(a.callbackSecret, later)).toBe(false);

    // A second rotation replaces the overlap: the first secret no longer signs, the second does for a day.
    const again = await rotateCallbackSecret(deps, user.id, a.key.id);
    if (!again.ok) throw new Error(again.error);
    const third = await callbackOf(a.token, user.id, "a-third");
    expect(await verifies(again.callbackSecret, third)).toBe(true);
    expect(await verifies(rotated.callbackSecret, third)).toBe(true);
    expect(await verifies(a.callbackSecret, third)).toBe(false);
  });

  it("the owner stops a replaced secret now: it signs no further callback; a stranger, a revoked key or a second stop change nothing", async () => {
    const owner = await makeUser({ credits: 2 });
    const stranger = await makeUser();
    const made = await createApiKey(deps, owner.id, { name: "Leaked", scopes: ["stage", "read"] });
    if (!made.ok) throw new Error(made.error);
    // Nothing replaced yet: nothing to stop.
    expect(await endPreviousCallbackSecret(deps, owner.id, made.key.id)).toMatchObject({ ok: false, code: "conflict" });
    const rotated = await rotateCallbackSecret(deps, owner.id, made.key.id);
    if (!rotated.ok) throw new Error(rotated.error);
    const before = await whole(made.key.id);
    expect(await endPreviousCallbackSecret(deps, stranger.id, made.key.id)).toMatchObject({
      ok: false,
      code: "not_found",
    });
    expect(await whole(made.key.id)).toEqual(before);

    expect(await endPreviousCallbackSecret(deps, owner.id, made.key.id)).toEqual({ ok: true, name: "Leaked" });
    expect(await whole(made.key.id)).toMatchObject({
      callbackSecret: before.callbackSecret,
      previousCallbackSecret: null,
      previousCallbackUntil: null,
    });
    const after = await callbackOf(made.token, owner.id, "stopped");
    expect(after.headers.get(SIGNATURE_HEADER)?.match(/v1=/g)).toHaveLength(1);
    expect(await verifies(rotated.callbackSecret, after)).toBe(true);
    expect(await verifies(made.callbackSecret, after)).toBe(false);
    expect(await endPreviousCallbackSecret(deps, owner.id, made.key.id)).toMatchObject({ ok: false, code: "conflict" });

    // Revoked within the overlap: not the owner's to change any more.
    await rotateCallbackSecret(deps, owner.id, made.key.id);
    await revokeApiKey(deps, owner.id, made.key.id);
    const revoked = await whole(made.key.id);
    expect(await endPreviousCallbackSecret(deps, owner.id, made.key.id)).toMatchObject({
      ok: false,
      code: "not_found",
    });
    expect(await whole(made.key.id)).toEqual(revoked);
  });

  it("only the owner rotates, and only an active key", async () => {
    const owner = await makeUser();
    const stranger = await makeUser();
    const made = await createApiKey(deps, owner.id, { name: "K", scopes: ["read"] });
    if (!made.ok) throw new Error(made.error);
    const before = await stored(made.key.id);
    expect(await rotateCallbackSecret(deps, stranger.id, made.key.id)).toMatchObject({ ok: false, code: "not_found" });
    expect(await stored(made.key.id)).toEqual(before);
    await revokeApiKey(deps, owner.id, made.key.id);
    expect(await rotateCallbackSecret(deps, owner.id, made.key.id)).toMatchObject({ ok: false, code: "not_found" });
  });

  it("a key made before secrets were stored keeps its secret through the reseal and later signing key rotations", async () => {
    const user = await makeUser({ credits: 2 });
    const made = await createApiKey(deps, user.id, { name: "Old", scopes: ["stage", "read"] });
    if (!made.ok) throw new Error(made.error);
    // As migration 0016 leaves a key made before it: nothing stored; its secret is today's derivation.
    await db.update(apiKeys).set({ callbackSecret: null, callbackSecretKey: null }).where(eq(apiKeys.id, made.key.id));
    const integrators = await derivedCallbackSecret(env.SIGNING_SECRET!, made.key.id);
    expect(await verifies(integrators, await callbackOf(made.token, user.id, "old"))).toBe(true);

    // The daily maintenance seals it under the current key (t2)...
    const first = await resealCallbackSecrets(deps);
    expect(first.resealed).toBeGreaterThanOrEqual(1);
    expect((await stored(made.key.id)).callbackSecretKey).toBe("t2");
    // ...so it no longer needs SIGNING_SECRET,
    const withoutLegacy = { SIGNING_KEYS: env.SIGNING_KEYS };
    expect(await callbackSecretFor(withoutLegacy, made.key.id, await stored(made.key.id))).toBe(integrators);
    // and a rotation to t3 (t2 kept one more day) reseals it without changing it. The reseal covers every key, so
    // the others are put back afterwards (this Worker does not know t3).
    const all = await db.select().from(apiKeys).all();
    try {
      const t3 = { SIGNING_KEYS: `t3:test-signing-key-three-not-for-production,${env.SIGNING_KEYS}` };
      await resealCallbackSecrets({ db, env: { ...env, ...t3 } });
      expect((await stored(made.key.id)).callbackSecretKey).toBe("t3");
      const onlyT3 = { SIGNING_KEYS: "t3:test-signing-key-three-not-for-production" };
      expect(await callbackSecretFor(onlyT3, made.key.id, await stored(made.key.id))).toBe(integrators);
    } finally {
      for (const k of all) {
        await db
          .update(apiKeys)
          .set({ callbackSecret: k.callbackSecret, callbackSecretKey: k.callbackSecretKey })
          .where(eq(apiKeys.id, k.id));
      }
    }
  });

  it("a secret sealed under a removed signing key is not guessed: the callback fails and says why", async () => {
    const user = await makeUser({ credits: 2 });
    const made = await createApiKey(deps, user.id, { name: "Lost", scopes: ["stage", "read"] });
    if (!made.ok) throw new Error(made.error);
    await db.update(apiKeys).set({ callbackSecretKey: "t0" }).where(eq(apiKeys.id, made.key.id));
    const photo = await makePhoto(user.id);
    const res = await workerFetch(`/api/v1/photos/${photo.id}/jobs`, {
      method: "POST",
      headers: { Authorization: `Bearer ${made.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        kind: "stage",
        roomType: "Bedroom",
        designStyle: "Scandinavian",
        callbackUrl: "http://hooks.example.com/lost",
      }),
    });
    const { job } = (await res.json()) as { job: { id: string } };
    const stub = userObject(env, user.id);
    let row = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, job.id)).get();
    for (let i = 0; i < 200 && row?.status !== "failed"; i++) {
      if (i % 10 === 9) await runDurableObjectAlarm(stub);
      await new Promise((r) => setTimeout(r, 50));
      row = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, job.id)).get();
    }
    expect(row?.status).toBe("failed");
    expect(row?.lastError).toContain("callback signing secret cannot be read");
    expect(received.filter((r) => r.url.endsWith("/lost"))).toEqual([]);
    expect((await resealCallbackSecrets(deps)).unreadable).toBe(1);
    expect(takeConsoleErrors().map((e) => String(e[0]))).toEqual([
      expect.stringContaining(
        "callback secrets: 1 API key(s) have a callback secret sealed under a signing key no longer configured",
      ),
    ]);
  });
});
