import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { apiIdempotency, apiKeys, auditLog, creditReservations, dataExports, jobs, photos } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { accountDeps, tokenFrom } from "@test/support/accounts";
import { db, makeUser } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { workerFetch } from "@test/support/worker";
import { signLink } from "@workers/lib/signed-links";
import { IDEMPOTENCY_TTL_MS } from "@workers/objects/client";
import { userObject } from "@workers/objects/user-object";
import { requestPasswordReset, resetPassword } from "@workers/services/accounts/password-reset";
import { revokeSessions, revokeUserApiKey } from "@workers/services/admin";
import { createApiKey, keysRevokedNotice, listApiKeys } from "@workers/services/api-keys";
import type { CurrentUser } from "@workers/services/current-user";
import { deleteAccount, requestExport } from "@workers/services/mls/account-data";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MESSAGES } from "~/shared/account-messages";

// Credentials end with the account's trust (issue 36, docs/decisions/0153-credentials-end-with-the-accounts-trust.md):
// a password reset and an admin's "sign out everywhere" revoke the API keys too, an admin can revoke one key, an
// export link dies with its account, and an Idempotency-Key whose stored answer expired starts a new, charged job.

const PASSWORD = "correct horse battery";
const RESULT = makeJpeg(64, 48, 80);
const deps = { db, env, clock: () => Date.now() };
const allow = async () => ({ allowed: true, retryAfterSeconds: 0 });

beforeEach(() => {
  const provider = stubProvider((req) =>
    req.url.startsWith(`${env.MAIL_API_URL}/`) ? Response.json({ id: "m1" }) : null,
  );
  provider.answer = () => [RESULT];
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function keyFor(userId: string) {
  const made = await createApiKey(deps, userId, { name: "Listing sync", scopes: ["stage", "read"] });
  if (!made.ok) throw new Error(made.error);
  return made;
}

function api(token: string, path: string, init: { method?: string; json?: unknown; idem?: string } = {}) {
  const headers = new Headers({ Authorization: `Bearer ${token}` });
  if (init.idem) headers.set("Idempotency-Key", init.idem);
  if (init.json !== undefined) headers.set("Content-Type", "application/json");
  return workerFetch(`/api/v1${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
}

async function anAdmin(): Promise<CurrentUser> {
  const u = await makeUser({ role: "admin" });
  return {
    id: u.id,
    email: u.email,
    name: "admin",
    role: "admin",
    verified: true,
    credits: 0,
    plan: null,
    live: { credits: 0, plan: null },
    sessionId: "s",
  };
}

describe("API keys end with the account's trust", () => {
  it("a password reset revokes every key: the old key answers 401, and the owner is told", async () => {
    const user = await makeUser({ password: PASSWORD, credits: 1 });
    const { token } = await keyFor(user.id);
    const other = await keyFor(user.id);
    expect((await api(token, "/balance")).status).toBe(200);

    const t = accountDeps();
    await requestPasswordReset(t.deps, { email: user.email });
    await t.flush();
    const reset = await resetPassword(accountDeps().deps, {
      token: tokenFrom(t.sent[0]),
      password: "a brand new password",
    });
    expect(reset).toMatchObject({ ok: true, revokedKeys: 2 });

    for (const k of [token, other.token]) {
      const res = await api(k, "/balance");
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ ok: false, code: "unauthenticated" });
    }
    const rows = await db.select().from(apiKeys).where(eq(apiKeys.userId, user.id)).all();
    expect(rows.map((r) => r.revokedReason)).toEqual(["password_reset", "password_reset"]);
    // The settings page explains it until a new key is made.
    const keys = await listApiKeys(db, user.id);
    expect(keysRevokedNotice(keys)).toMatch(/^2 of your API keys were revoked when your password was reset/);
    const fresh = await keyFor(user.id);
    expect(keysRevokedNotice(await listApiKeys(db, user.id))).toBeNull();
    expect((await api(fresh.token, "/balance")).status).toBe(200);
    expect(MESSAGES.passwordChangedKeysRevoked).toContain("API keys were revoked");
  });

  it("an admin's 'sign out everywhere' revokes the keys too, in the same audited change", async () => {
    const a = await anAdmin();
    const user = await makeUser({ credits: 1 });
    const { token } = await keyFor(user.id);
    expect((await api(token, "/balance")).status).toBe(200);
    expect(await revokeSessions(db, a, user.id, "Account taken over")).toEqual({
      ok: true,
      message: "Signed out of 0 sessions and revoked 1 API key.",
    });
    expect((await api(token, "/balance")).status).toBe(401);
    const audit = await db.select().from(auditLog).where(eq(auditLog.targetUserId, user.id)).all();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "sessions.revoke", details: { sessions: 0, apiKeys: 1 } });
    expect(keysRevokedNotice(await listApiKeys(db, user.id))).toMatch(/signed you out everywhere/);
  });

  it("an admin revokes one key of the user; another user's key or one already revoked changes nothing", async () => {
    const a = await anAdmin();
    const user = await makeUser();
    const stranger = await makeUser();
    const kept = await keyFor(user.id);
    const target = await keyFor(user.id);
    const theirs = await keyFor(stranger.id);

    expect(await revokeUserApiKey(db, a, user.id, theirs.key.id, "not theirs")).toMatchObject({
      ok: false,
      code: "not_found",
    });
    expect((await api(theirs.token, "/balance")).status).toBe(200);

    const done = await revokeUserApiKey(db, a, user.id, target.key.id, "Leaked in a public repository");
    expect(done).toMatchObject({ ok: true });
    expect((await api(target.token, "/balance")).status).toBe(401);
    expect((await api(kept.token, "/balance")).status).toBe(200);
    expect(await revokeUserApiKey(db, a, user.id, target.key.id, "again")).toMatchObject({
      ok: false,
      code: "conflict",
    });
    const audit = await db.select().from(auditLog).where(eq(auditLog.targetUserId, user.id)).all();
    expect(audit.map((r) => [r.action, r.reason, r.details])).toEqual([
      ["api_key.revoke", "Leaked in a public repository", { keyId: target.key.id, prefix: target.key.prefix }],
    ]);
    expect(await db.select().from(auditLog).where(eq(auditLog.targetUserId, stranger.id)).all()).toHaveLength(0);
  });
});

describe("a data export link after the account's deletion", () => {
  it("answers 410 right after the deletion, before the purge has run", async () => {
    const user = await makeUser({ password: PASSWORD, credits: 1 });
    await makePhoto(user.id);
    const asked = await requestExport({ db, env, clock: Date.now, rateLimit: allow }, user.id);
    if (!asked.ok) throw new Error(asked.error);
    const stub = userObject(env, user.id);
    await runDurableObjectAlarm(stub);
    const row = await db.select().from(dataExports).where(eq(dataExports.id, asked.id)).get();
    expect(row?.status).toBe("ready");
    const link = `/api/exports/${asked.id}?exp=${row!.expiresAt}&sig=${await signLink(env, "export", asked.id, row!.expiresAt!)}`;
    const before = await workerFetch(link);
    expect(before.status).toBe(200);
    await before.arrayBuffer();

    const deleted = await deleteAccount({ db, env, stripe: {} as never, clock: Date.now, rateLimit: allow }, user.id, {
      password: PASSWORD,
    });
    expect(deleted).toEqual({ ok: true });
    // The purge has not run (the alarm is not driven here): the archive is still in R2.
    expect(await env.PHOTOS.head(row!.objectKey!)).not.toBeNull();
    const after = await workerFetch(link);
    expect(after.status).toBe(410);
    expect(await after.json()).toMatchObject({ ok: false, code: "gone" });
  });
});

describe("a data export link after a password reset or an admin's sign-out everywhere", () => {
  const exportDeps = { db, env, clock: Date.now, rateLimit: allow };

  /** A ready export of the user, and its mailed link (the address as the e-mail carries it). */
  async function readyExport(userId: string) {
    const asked = await requestExport(exportDeps, userId);
    if (!asked.ok) throw new Error(asked.error);
    await runDurableObjectAlarm(userObject(env, userId));
    const row = await db.select().from(dataExports).where(eq(dataExports.id, asked.id)).get();
    expect(row?.status).toBe("ready");
    const sig = await signLink(env, "export", asked.id, row!.expiresAt!);
    return { id: asked.id, link: `/api/exports/${asked.id}?exp=${row!.expiresAt}&sig=${sig}`, row: row! };
  }

  /** The export e-mails sent while `run` runs. */
  async function mailsDuring(run: () => Promise<unknown>): Promise<number> {
    const before = vi.mocked(globalThis.fetch).mock.calls.length;
    await run();
    return vi
      .mocked(globalThis.fetch)
      .mock.calls.slice(before)
      .filter(([input, init]) => new Request(input, init).url.startsWith(`${env.MAIL_API_URL}/`)).length;
  }

  async function expectGone(link: string) {
    const res = await workerFetch(link);
    expect(res.status).toBe(410);
    expect(await res.json()).toMatchObject({ ok: false, code: "gone" });
  }

  it("a reset ends a mailed link (410) and an export still being prepared is never mailed; a new one works", async () => {
    const user = await makeUser({ password: PASSWORD, credits: 1 });
    await makePhoto(user.id);
    const mailed = await readyExport(user.id);
    const before = await workerFetch(mailed.link);
    expect(before.status).toBe(200);
    await before.arrayBuffer();
    // A second export asked for before the reset, not built yet (its alarm has not run).
    const pending = await requestExport(exportDeps, user.id);
    if (!pending.ok) throw new Error(pending.error);

    const t = accountDeps();
    await requestPasswordReset(t.deps, { email: user.email });
    await t.flush();
    expect(
      await resetPassword(accountDeps().deps, { token: tokenFrom(t.sent[0]), password: "a brand new password" }),
    ).toMatchObject({ ok: true });

    await expectGone(mailed.link);
    // The pending one is not built or mailed when its turn comes.
    expect(await mailsDuring(() => runDurableObjectAlarm(userObject(env, user.id)))).toBe(0);
    const rows = await db.select().from(dataExports).where(eq(dataExports.userId, user.id)).all();
    expect(rows.find((r) => r.id === pending.id)).toMatchObject({ status: "failed", objectKey: null });
    // An export asked for after the reset is mailed and downloads.
    const fresh = await readyExport(user.id);
    const after = await workerFetch(fresh.link);
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  });

  it("an admin's sign-out everywhere ends the link in the same change, and leaves another user's link alone", async () => {
    const a = await anAdmin();
    const user = await makeUser({ credits: 1 });
    const stranger = await makeUser({ credits: 1 });
    await makePhoto(user.id);
    await makePhoto(stranger.id);
    const mailed = await readyExport(user.id);
    const theirs = await readyExport(stranger.id);
    const before = await workerFetch(mailed.link);
    expect(before.status).toBe(200);
    await before.arrayBuffer();

    expect(await revokeSessions(db, a, user.id, "Account taken over")).toMatchObject({ ok: true });
    await expectGone(mailed.link);
    const other = await workerFetch(theirs.link);
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });
});

describe("an Idempotency-Key whose stored answer expired", () => {
  const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Scandinavian" };

  it("replays within its lifetime, then starts (and charges) a new job once the answer has expired", async () => {
    const user = await makeUser({ credits: 3 });
    const photo = await makePhoto(user.id);
    const { token } = await keyFor(user.id);
    const send = () => api(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE, idem: "nightly-sync-42" });

    const first = await send();
    expect(first.status).toBe(202);
    const a = (await first.json()) as { job: { id: string }; credits: number };
    expect(a.credits).toBe(2);

    const again = await send();
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(((await again.json()) as { job: { id: string } }).job.id).toBe(a.job.id);

    // A day and a second later (the user's object runs on its own clock, moved forward here).
    const stub = userObject(env, user.id);
    await stub.advanceClockForTesting(IDEMPOTENCY_TTL_MS + 1000);
    const later = await send();
    expect(later.status).toBe(202);
    expect(later.headers.get("Idempotent-Replayed")).toBeNull();
    const b = (await later.json()) as { job: { id: string }; credits: number };
    expect(b.job.id).not.toBe(a.job.id);
    expect(b.credits).toBe(1);
    expect(await stub.balance(user.id)).toBe(1);
    const reservations = await db.select().from(creditReservations).where(eq(creditReservations.userId, user.id)).all();
    expect(reservations.map((r) => r.key).sort()).toEqual([a.job.id, b.job.id].sort());
    expect(await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).toHaveLength(2);
    // And the new answer replays in its own lifetime.
    const replay = await send();
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(((await replay.json()) as { job: { id: string } }).job.id).toBe(b.job.id);
    const stored = await db
      .select()
      .from(apiIdempotency)
      .where(and(eq(apiIdempotency.userId, user.id), eq(apiIdempotency.key, "nightly-sync-42")))
      .all();
    expect(stored).toHaveLength(1);
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toHaveLength(1);
  });
});

describe("names cut on character boundaries", () => {
  it("a photo name sent through the API keeps whole characters at the 100-character cut, never U+FFFD", async () => {
    const user = await makeUser();
    const { token } = await keyFor(user.id);
    const name = `${"a".repeat(99)}😀 and more`;
    const fd = new FormData();
    fd.set("file", new Blob([makeJpeg(64, 48, 80)], { type: "image/jpeg" }), "x.jpg");
    fd.set("name", name);
    const res = await workerFetch("/api/v1/photos", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
      body: fd,
    });
    expect(res.status).toBe(201);
    const row = await db.select().from(photos).where(eq(photos.userId, user.id)).get();
    // Compared as JSON, so a failure's message never carries the broken character itself.
    expect(JSON.stringify(row?.name)).toBe(JSON.stringify("a".repeat(99)));
    expect(row?.name.includes("\uFFFD")).toBe(false);
  });
});
