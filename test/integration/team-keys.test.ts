import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import {
  apiCallbacks,
  apiIdempotency,
  apiKeys,
  creditLedger,
  folders,
  photos,
  teamLedger,
  teamReservations,
  teams,
  users,
} from "@db/schema";
import { keyPayer } from "@db/teams";
import { makeJpeg } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { balance, onPlan, photosOf } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { fakeStripe } from "@test/support/stripe";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { apiV1 } from "@test/support/worker";
import { SIGNATURE_HEADER, signingSecrets, verifySignatureHeader } from "@workers/lib/callback-signing";
import { KEY_MISMATCH, teamObject, userObject } from "@workers/objects/client";
import { emailField } from "@workers/services/accounts/validation";
import { keepJobAnswer } from "@workers/services/api-idempotency";
import { stateDigest } from "@workers/services/fixtures";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import { listTeamKeys, TEAM_KEY_NOT_FOUND, TEAM_KEY_REVOKED, teamRunnerId } from "@workers/services/teams/keys";
import { TEAM_ADMIN_ONLY } from "@workers/services/teams/teams";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { memberLimitMessage, TEAM_POOL_EMPTY } from "~/shared/teams";

// Team API keys (issue 47 item 6; docs/decisions/0295-team-api-keys.md): made, listed and revoked by the team's
// owner and team admins only (an agent 403, another team's key 404, nothing written); a key's jobs run in the team's
// runner on its own team listing and spend the pool once, under the key's name; a revoked key is 401 at once; a key
// outlives the removal of the admin who made it; and it never reaches a member's personal folder.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };
const digest = () => stateDigest({ env, bucket: env.PHOTOS });
const deps = () => ({
  db,
  env,
  origin: "http://localhost",
  clock: () => Date.now(),
  stripe: fakeStripe().stripe,
  mailer: {
    async send() {
      throw new Error("no mail is sent by these actions");
    },
  },
});

async function act(teamId: string, userId: string, fields: Record<string, string>) {
  const input = teamActionInput.safeParse(fields);
  if (!input.success) throw new Error(input.error.message);
  return runTeamAction(deps(), teamId, userId, input.data);
}

async function makeKey(teamId: string, by: string, name = "CRM sync", limit = "") {
  const made = await act(teamId, by, { intent: "create-key", name, limit });
  if (!made.ok || !made.token) throw new Error(JSON.stringify(made));
  const row = await db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.prefix, made.token.slice(0, 10)))
    .get();
  return { token: made.token, id: row!.id, folderId: row!.folderId! };
}

const call = apiV1;

let seed = 100;
async function upload(token: string): Promise<{ status: number; photoId: string }> {
  const form = new FormData();
  form.append("file", new Blob([makeJpeg(64, 48, 80, 24, ++seed)], { type: "image/jpeg" }), "room.jpg");
  const res = await call(token, "/photos", { method: "POST", body: form });
  const body = (await res.json()) as { photo?: { id: string } };
  return { status: res.status, photoId: body.photo?.id ?? "" };
}

async function settle(token: string, jobId: string) {
  for (let i = 0; i < 400; i++) {
    const body = (await (await call(token, `/jobs/${jobId}`)).json()) as { job: { status: string } };
    if (body.job.status === "succeeded" || body.job.status === "failed") return body.job.status;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the job did not settle");
}

async function poolOf(teamId: string) {
  const team = await db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)).get();
  return team!.credits;
}

/** A team with an owner, a team admin and an agent, and a pool of `credits`. */
async function team(credits: number) {
  const owner = await onPlan(null, 3);
  const teamId = await makeTeam(owner.id, { credits });
  const admin = await signedIn({ credits: 4 });
  const agent = await signedIn({ credits: 5 });
  await addMember(teamId, admin.id, "team_admin");
  await addMember(teamId, agent.id, "agent");
  return { owner, admin, agent, teamId };
}

describe("team API keys: made, listed and revoked by team admins", () => {
  it("a team admin creates, lists and revokes a key; an agent is refused 403 and nothing changes", async () => {
    const { admin, agent, teamId } = await team(0);
    const key = await makeKey(teamId, admin.id, "Listing sync", "7");
    expect(key.token).toMatch(/^sw_[a-z2-7]{32}$/);
    const listed = await listTeamKeys(db, teamId, Date.now());
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: key.id, name: "Listing sync", creditLimit: 7, revokedAt: null });
    expect(listed[0]!.createdBy).toBe((await signedInName(admin.id)) ?? "");
    // Stored hashed like a personal key: the secret appears nowhere in D1.
    const row = await db.select().from(apiKeys).where(eq(apiKeys.id, key.id)).get();
    expect(row!.tokenHash).not.toContain(key.token.slice(3));
    expect(JSON.stringify(row)).not.toContain(key.token);
    expect(row).toMatchObject({ teamId, userId: teamRunnerId(teamId), createdBy: admin.id });
    // Nobody can sign up (or come from Google) with the runner's address, so nobody can take it first.
    const runner = await db
      .select()
      .from(users)
      .where(eq(users.id, teamRunnerId(teamId)))
      .get();
    expect(runner).toMatchObject({ passwordHash: null, googleSub: null });
    expect(emailField.safeParse(runner!.email).success).toBe(false);
    // Its uploads' listing belongs to the team.
    const listing = await db.select().from(folders).where(eq(folders.id, key.folderId)).get();
    expect(listing).toMatchObject({ teamId, userId: teamRunnerId(teamId), name: "Listing sync (API)" });

    const before = await digest();
    const agentAsks: Record<string, string>[] = [
      { intent: "create-key", name: "Mine now", limit: "" },
      { intent: "revoke-key", keyId: key.id },
      { intent: "rotate-key-secret", keyId: key.id },
      { intent: "end-key-old-secret", keyId: key.id },
    ];
    for (const fields of agentAsks) {
      expect(await act(teamId, agent.id, fields), fields.intent).toMatchObject({
        ok: false,
        code: "forbidden",
        error: TEAM_ADMIN_ONLY,
      });
    }
    expect(await digest()).toEqual(before);
    expect((await call(key.token, "/balance")).status).toBe(200);

    expect(await act(teamId, admin.id, { intent: "revoke-key", keyId: key.id })).toMatchObject({ ok: true });
    expect((await listTeamKeys(db, teamId, Date.now()))[0]!.revokedAt).not.toBeNull();
    expect(await act(teamId, admin.id, { intent: "revoke-key", keyId: key.id })).toMatchObject({
      code: "conflict",
      error: TEAM_KEY_REVOKED,
    });
  });

  it("another team's key id answers 404 to this team's admin, and a stranger's team 404; nothing changes", async () => {
    const mine = await team(0);
    const other = await team(0);
    const theirs = await makeKey(other.teamId, other.owner.id);
    const before = await digest();
    expect(await act(mine.teamId, mine.owner.id, { intent: "revoke-key", keyId: theirs.id })).toMatchObject({
      code: "not_found",
      error: TEAM_KEY_NOT_FOUND,
    });
    expect(await act(other.teamId, mine.owner.id, { intent: "revoke-key", keyId: theirs.id })).toMatchObject({
      code: "not_found",
    });
    for (const intent of ["rotate-key-secret", "end-key-old-secret"]) {
      expect(await act(mine.teamId, mine.owner.id, { intent, keyId: theirs.id }), intent).toMatchObject({
        code: "not_found",
        error: TEAM_KEY_NOT_FOUND,
      });
      expect(await act(other.teamId, mine.owner.id, { intent, keyId: theirs.id }), intent).toMatchObject({
        code: "not_found",
      });
    }
    expect(await act(other.teamId, mine.admin.id, { intent: "create-key", name: "x", limit: "" })).toMatchObject({
      code: "not_found",
    });
    expect(await digest()).toEqual(before);
    expect((await call(theirs.token, "/balance")).status).toBe(200);
  });

  it("a team admin replaces a key's callback secret; the old one signs for a day unless stopped now (ADR 0355)", async () => {
    const { admin, teamId } = await team(1);
    const made = await act(teamId, admin.id, { intent: "create-key", name: "Feed hooks", limit: "" });
    const first = made.ok ? made.callbackSecret! : "";
    const keyRow = async () => (await db.select().from(apiKeys).where(eq(apiKeys.name, "Feed hooks")).get())!;
    const keyId = (await keyRow()).id;
    expect((await listTeamKeys(db, teamId, Date.now()))[0]!.oldSecretSignsUntil).toBeNull();

    const rotated = await act(teamId, admin.id, { intent: "rotate-key-secret", keyId });
    expect(rotated).toMatchObject({ ok: true, message: expect.stringContaining('"Feed hooks"') });
    const second = rotated.ok ? rotated.callbackSecret! : "";
    expect(second).toMatch(/^whsec_[a-z2-7]{52}$/);
    expect(second).not.toBe(first);
    // Its callbacks are signed with both for a day, the new one last; the runner's row, not anyone's own.
    expect(await signingSecrets(env, keyId, await keyRow())).toEqual([first, second]);
    expect(await keyRow()).toMatchObject({ userId: teamRunnerId(teamId), revokedAt: null });
    const until = (await listTeamKeys(db, teamId, Date.now()))[0]!.oldSecretSignsUntil;
    expect(until).toBeGreaterThan(Date.now() + 23 * 3600_000);

    // Stopped now: only the new one signs; stopping it again says so and changes nothing.
    expect(await act(teamId, admin.id, { intent: "end-key-old-secret", keyId })).toMatchObject({
      ok: true,
      message: 'The old callback secret of "Feed hooks" no longer signs callbacks.',
    });
    expect(await signingSecrets(env, keyId, await keyRow())).toEqual([second]);
    expect((await listTeamKeys(db, teamId, Date.now()))[0]!.oldSecretSignsUntil).toBeNull();
    let before = await digest();
    expect(await act(teamId, admin.id, { intent: "end-key-old-secret", keyId })).toMatchObject({
      ok: false,
      code: "conflict",
    });
    expect(await digest()).toEqual(before);

    // A revoked key's secret is neither replaced nor stopped.
    expect(await act(teamId, admin.id, { intent: "revoke-key", keyId })).toMatchObject({ ok: true });
    before = await digest();
    for (const intent of ["rotate-key-secret", "end-key-old-secret"]) {
      expect(await act(teamId, admin.id, { intent, keyId }), intent).toMatchObject({
        ok: false,
        code: "conflict",
        error: TEAM_KEY_REVOKED,
      });
    }
    expect(await digest()).toEqual(before);
  });

  it("refuses a malformed key id or name at the form (400), before any service runs", () => {
    expect(teamActionInput.safeParse({ intent: "revoke-key", keyId: "../x" }).success).toBe(false);
    expect(teamActionInput.safeParse({ intent: "create-key", name: "", limit: "" }).success).toBe(false);
    expect(teamActionInput.safeParse({ intent: "create-key", name: "ok", limit: "-1" }).success).toBe(false);
  });
});

describe("a team key's jobs", () => {
  it("start in the key's team listing and spend the pool exactly once, under the key's name", async () => {
    const { owner, admin, agent, teamId } = await team(5);
    const key = await makeKey(teamId, admin.id);
    const up = await upload(key.token);
    expect(up.status).toBe(201);
    const photo = await db.select().from(photos).where(eq(photos.id, up.photoId)).get();
    expect(photo).toMatchObject({ userId: teamRunnerId(teamId), folderId: key.folderId });

    const first = await call(key.token, `/photos/${up.photoId}/jobs`, { method: "POST", json: STAGE, idem: "a1" });
    expect(first.status).toBe(202);
    const { job, credits } = (await first.json()) as { job: { id: string }; credits: number };
    expect(credits).toBe(4);
    // The same request sent again: the same job, charged nothing more.
    const again = await call(key.token, `/photos/${up.photoId}/jobs`, { method: "POST", json: STAGE, idem: "a1" });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { job: { id: string } }).job.id).toBe(job.id);
    // The key sent with another request is refused.
    const other = { ...STAGE, designStyle: "Industrial" };
    const reused = await call(key.token, `/photos/${up.photoId}/jobs`, { method: "POST", json: other, idem: "a1" });
    expect(reused.status).toBe(409);

    expect(await settle(key.token, job.id)).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    expect(provider.calls).toHaveLength(1);
    expect(await poolOf(teamId)).toBe(4);
    const held = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
    expect(held.map((r) => [r.jobId, r.memberId, r.status])).toEqual([[job.id, keyPayer(key.id), "committed"]]);
    const ledger = await db.select().from(teamLedger).where(eq(teamLedger.teamId, teamId)).all();
    expect(ledger.filter((r) => r.kind !== "grant").every((r) => r.memberId === keyPayer(key.id))).toBe(true);
    // No person's credits moved: not the maker's, the owner's or the agent's; the runner's reservation is 0.
    expect([await balance(admin.id), await balance(owner.id), await balance(agent.id)]).toEqual([4, 3, 5]);
    const runnerRows = await db
      .select()
      .from(creditLedger)
      .where(eq(creditLedger.userId, teamRunnerId(teamId)))
      .all();
    expect(runnerRows.length).toBeGreaterThan(0);
    expect(runnerRows.every((r) => r.amount === 0)).toBe(true);
    // GET /balance answers the team's pool.
    expect(await (await call(key.token, "/balance")).json()).toEqual({ credits: 4 });
  });

  it("compare the request a key was sent with, not the job it would start: a sky sent again after it ran is its answer", async () => {
    const { admin, teamId } = await team(5);
    const key = await makeKey(teamId, admin.id);
    const up = await upload(key.token);
    const SKY = { kind: "sky", skyType: "dusk" };
    const send = (json: Record<string, unknown>) =>
      call(key.token, `/photos/${up.photoId}/jobs`, { method: "POST", json, idem: "sky-1" });
    const first = await send(SKY);
    expect(first.status).toBe(202);
    const { job } = (await first.json()) as { job: { id: string } };
    expect(await settle(key.token, job.id)).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    expect(await poolOf(teamId)).toBe(4);
    const before = await digest();

    // The client's retry after the job finished (its first answer was lost): the same job, nothing new charged.
    const again = await send(SKY);
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(((await again.json()) as { job: { id: string } }).job.id).toBe(job.id);
    // The same key with another callback address is another request: refused, nothing stored.
    const hooked = await send({ ...SKY, callbackUrl: "http://hooks.example.com/other" });
    expect(hooked.status).toBe(409);
    expect(((await hooked.json()) as { error: string }).error).toBe(KEY_MISMATCH);
    expect(await digest()).toEqual(before);
    expect(provider.calls).toHaveLength(1);
    expect(await poolOf(teamId)).toBe(4);

    // A sending the runner's object answered with this job (two sent at once): refused when the stored request
    // differs, and it never replaces the stored answer; the request that started a job keeps the first answer too.
    // (The key is stored under its API key's name, callerRequestKey.)
    const runner = teamRunnerId(teamId);
    const stored = () => db.select().from(apiIdempotency).where(eq(apiIdempotency.userId, runner)).get();
    const row = await stored();
    const now = Date.now();
    expect(
      await keepJobAnswer(db, runner, { key: row!.key, hash: "other", answer: { job: {} }, replayed: true }, now),
    ).toMatchObject({
      ok: false,
      code: "conflict",
    });
    expect(
      await keepJobAnswer(
        db,
        runner,
        { key: row!.key, hash: row!.requestHash, answer: { job: {} }, replayed: true },
        now,
      ),
    ).toBeNull();
    expect(
      await keepJobAnswer(db, runner, { key: row!.key, hash: "other", answer: { job: {} }, replayed: false }, now),
    ).toBeNull();
    expect(await stored()).toEqual(row);
  });

  it("refuse a key's second sending with another callback address even when the first's answer is not stored yet", async () => {
    const { admin, teamId } = await team(5);
    const key = await makeKey(teamId, admin.id, "Hooks at once");
    const up = await upload(key.token);
    const send = (idem: string, callbackUrl: string) =>
      call(key.token, `/photos/${up.photoId}/jobs`, { method: "POST", json: { ...STAGE, callbackUrl }, idem });
    const first = await send("hook-1", "http://hooks.example.com/a");
    expect(first.status).toBe(202);
    const { job } = (await first.json()) as { job: { id: string } };
    expect(await settle(key.token, job.id)).toBe("succeeded");

    // The second sending reached the runner's object before the first had stored its answer under the key: the
    // object, where sendings are serialised, compares the callback address the job was started with.
    const runner = teamRunnerId(teamId);
    await db.delete(apiIdempotency).where(eq(apiIdempotency.userId, runner));
    // Everything but the callback's row, whose delivery goes on by itself.
    const state = async () => {
      const { d1, ...rest } = await digest();
      const { api_callbacks: _, ...tables } = d1 as Record<string, unknown>;
      return { ...rest, tables };
    };
    const before = await state();
    const other = await send("hook-1", "http://hooks.example.com/b");
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: string }).error).toBe(KEY_MISMATCH);
    expect(await state()).toEqual(before);
    const hook = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, job.id)).get();
    expect(hook?.url).toBe("http://hooks.example.com/a");
    // The same request is still its job.
    const again = await send("hook-1", "http://hooks.example.com/a");
    expect(again.status).toBe(202);
    expect(((await again.json()) as { job: { id: string } }).job.id).toBe(job.id);

    // Two sendings at once that differ only in their callback address: one job, one 202, one 409.
    const both = await Promise.all([
      send("hook-2", "http://hooks.example.com/c"),
      send("hook-2", "http://hooks.example.com/d"),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(await poolOf(teamId)).toBe(3);
  });

  it("keep their own Idempotency-Key names: key B sending a name key A used starts its own upload and job", async () => {
    const { admin, teamId } = await team(5);
    const a = await makeKey(teamId, admin.id, "CRM sync");
    const b = await makeKey(teamId, admin.id, "Listing feed");
    const uploadAs = async (token: string) => {
      const form = new FormData();
      form.append("file", new Blob([makeJpeg(64, 48, 80, 24, ++seed)], { type: "image/jpeg" }), "room.jpg");
      const res = await call(token, "/photos", { method: "POST", body: form, idem: "shared-name" });
      return {
        status: res.status,
        replayed: res.headers.get("Idempotent-Replayed"),
        body: (await res.json()) as { photo: { id: string } },
      };
    };
    const upA = await uploadAs(a.token);
    const upB = await uploadAs(b.token);
    expect([upA.status, upB.status]).toEqual([201, 201]);
    expect(upB.replayed).toBeNull();
    expect(upB.body.photo.id).not.toBe(upA.body.photo.id);
    // Each photo is in its own key's listing.
    const rows = await db
      .select({ id: photos.id, folderId: photos.folderId })
      .from(photos)
      .where(eq(photos.userId, teamRunnerId(teamId)))
      .all();
    expect(new Map(rows.map((r) => [r.id, r.folderId]))).toEqual(
      new Map([
        [upA.body.photo.id, a.folderId],
        [upB.body.photo.id, b.folderId],
      ]),
    );

    const jobA = await call(a.token, `/photos/${upA.body.photo.id}/jobs`, {
      method: "POST",
      json: STAGE,
      idem: "job-1",
    });
    const jobB = await call(b.token, `/photos/${upB.body.photo.id}/jobs`, {
      method: "POST",
      json: STAGE,
      idem: "job-1",
    });
    expect([jobA.status, jobB.status]).toEqual([202, 202]);
    const idA = ((await jobA.json()) as { job: { id: string } }).job.id;
    const idB = ((await jobB.json()) as { job: { id: string } }).job.id;
    expect(idB).not.toBe(idA);
    expect(await settle(a.token, idA)).toBe("succeeded");
    expect(await settle(b.token, idB)).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    // Two jobs, two credits, each under its own key's name; the same name from A again is still A's job.
    expect(await poolOf(teamId)).toBe(3);
    const held = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
    expect(held.map((r) => r.memberId).sort()).toEqual([keyPayer(a.id), keyPayer(b.id)].sort());
    const againA = await call(a.token, `/photos/${upA.body.photo.id}/jobs`, {
      method: "POST",
      json: STAGE,
      idem: "job-1",
    });
    expect(((await againA.json()) as { job: { id: string } }).job.id).toBe(idA);
    expect(provider.calls).toHaveLength(2);
  });

  it("deliver a signed callback when they name one, signed with the key's own secret shown once at its making", async () => {
    const { admin, teamId } = await team(3);
    const made = await act(teamId, admin.id, { intent: "create-key", name: "CRM hooks", limit: "" });
    expect(made.ok && made.callbackSecret).toMatch(/^whsec_[a-z2-7]{52}$/);
    const key = {
      token: made.ok ? made.token! : "",
      id: (await db.select().from(apiKeys).where(eq(apiKeys.name, "CRM hooks")).get())!.id,
    };
    const secret = made.ok ? made.callbackSecret! : "";
    // The callback receiver, beside the provider's stub.
    const received: { headers: Headers; body: string }[] = [];
    const previous = vi.mocked(globalThis.fetch).getMockImplementation()!;
    vi.mocked(globalThis.fetch).mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (!req.url.startsWith("http://hooks.example.com/")) return previous(input, init);
      received.push({ headers: req.headers, body: await req.text() });
      return new Response("ok");
    });
    // A private address is refused before anything is reserved.
    const up = await upload(key.token);
    const privateHook = await call(key.token, `/photos/${up.photoId}/jobs`, {
      method: "POST",
      json: { ...STAGE, callbackUrl: "http://192.168.0.10/hook" },
    });
    expect(privateHook.status).toBe(400);
    expect(await poolOf(teamId)).toBe(3);

    const res = await call(key.token, `/photos/${up.photoId}/jobs`, {
      method: "POST",
      json: { ...STAGE, callbackUrl: "http://hooks.example.com/team" },
    });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: { id: string } };
    expect(await settle(key.token, job.id)).toBe("succeeded");
    const runner = userObject(env, teamRunnerId(teamId));
    for (let i = 0; i < 100 && received.length === 0; i++) {
      if (i % 10 === 9) await runDurableObjectAlarm(runner);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(received).toHaveLength(1);
    const now = Math.floor(Date.now() / 1000);
    const [hook] = received;
    expect(await verifySignatureHeader(secret, hook!.headers.get(SIGNATURE_HEADER), hook!.body, now)).toBe(true);
    const event = JSON.parse(hook!.body) as { type: string; data: { job: { id: string } } };
    expect(event).toMatchObject({ type: "job.succeeded", data: { job: { id: job.id } } });
    const row = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, job.id)).get();
    expect(row).toMatchObject({ status: "delivered", apiKeyId: key.id, userId: teamRunnerId(teamId) });
    await teamObject(env, teamId).reconcile(teamId);
    expect(await poolOf(teamId)).toBe(2);
  });

  it("are refused before any provider call with the key's limit, then the pool, each in its own words", async () => {
    const { admin, teamId } = await team(2);
    const limited = await makeKey(teamId, admin.id, "Limited", "1");
    const free = await makeKey(teamId, admin.id, "Free");
    const a = await upload(limited.token);
    const b = await upload(free.token);
    const ok = await call(limited.token, `/photos/${a.photoId}/jobs`, { method: "POST", json: STAGE });
    expect(ok.status).toBe(202);
    const over = await call(limited.token, `/photos/${a.photoId}/jobs`, { method: "POST", json: STAGE });
    expect(over.status).toBe(402);
    expect(((await over.json()) as { error: string }).error).toBe(memberLimitMessage(1));
    expect((await call(free.token, `/photos/${b.photoId}/jobs`, { method: "POST", json: STAGE })).status).toBe(202);
    const empty = await call(free.token, `/photos/${b.photoId}/jobs`, { method: "POST", json: STAGE });
    expect(empty.status).toBe(402);
    expect(((await empty.json()) as { error: string }).error).toBe(TEAM_POOL_EMPTY);
    for (const [token, res] of [
      [limited.token, ok],
      [free.token, null],
    ] as const) {
      if (res) await settle(token, ((await res.json()) as { job: { id: string } }).job.id);
    }
    const jobsOfFree = await db
      .select()
      .from(teamReservations)
      .where(and(eq(teamReservations.teamId, teamId), eq(teamReservations.memberId, keyPayer(free.id))))
      .all();
    expect(jobsOfFree).toHaveLength(1);
    await settle(free.token, jobsOfFree[0]!.jobId);
    expect(provider.calls).toHaveLength(2);
  });

  it("a revoked key answers 401 on its very next request and starts nothing", async () => {
    const { admin, teamId } = await team(3);
    const key = await makeKey(teamId, admin.id);
    const up = await upload(key.token);
    expect(await act(teamId, admin.id, { intent: "revoke-key", keyId: key.id })).toMatchObject({ ok: true });
    const before = await digest();
    for (const [path, init] of [
      [`/photos/${up.photoId}/jobs`, { method: "POST", json: STAGE }],
      ["/balance", {}],
      [`/photos/${up.photoId}/versions`, {}],
    ] as const) {
      expect((await call(key.token, path, init)).status, path).toBe(401);
    }
    expect(await digest()).toEqual(before);
    expect(await poolOf(teamId)).toBe(3);
  });

  it("a key made by a team admin who was then removed still works and spends the pool", async () => {
    const { owner, admin, teamId } = await team(2);
    const key = await makeKey(teamId, admin.id);
    expect(await act(teamId, owner.id, { intent: "remove", memberId: admin.id })).toMatchObject({ ok: true });
    const up = await upload(key.token);
    expect(up.status).toBe(201);
    const res = await call(key.token, `/photos/${up.photoId}/jobs`, { method: "POST", json: STAGE });
    expect(res.status).toBe(202);
    expect(await settle(key.token, ((await res.json()) as { job: { id: string } }).job.id)).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    expect(await poolOf(teamId)).toBe(1);
    expect(await balance(admin.id)).toBe(4);
    // Still listed, still naming who made it, for the team's admins.
    expect((await listTeamKeys(db, teamId, Date.now()))[0]).toMatchObject({ id: key.id, revokedAt: null });
  });

  it("never reaches a member's personal folder (404), nor another team's listing; nothing is charged", async () => {
    const { owner, agent, teamId } = await team(3);
    const key = await makeKey(teamId, owner.id);
    const personal = await db
      .insert(folders)
      .values({ id: `p${agent.id.slice(0, 20)}`, userId: agent.id, name: "Mine", createdAt: Date.now() })
      .returning();
    const [mine] = await photosOf(agent.id, 1, personal[0]!.id);
    // Even a member's photo in this team's listing is not the key's to run (it is not in the runner's library).
    const shared = await teamFolder(teamId, agent.id);
    const [inShared] = await photosOf(agent.id, 1, shared);
    const other = await team(3);
    const [theirs] = await photosOf(other.owner.id, 1, await teamFolder(other.teamId, other.owner.id));
    const before = await digest();
    for (const photoId of [mine!.id, inShared!.id, theirs!.id]) {
      expect((await call(key.token, `/photos/${photoId}/versions`)).status).toBe(404);
      expect((await call(key.token, `/photos/${photoId}/jobs`, { method: "POST", json: STAGE })).status).toBe(404);
    }
    expect(await digest()).toEqual(before);
    expect(provider.calls).toHaveLength(0);
    expect([await poolOf(teamId), await poolOf(other.teamId), await balance(agent.id)]).toEqual([3, 3, 5]);
  });
});

async function signedInName(userId: string) {
  const row = await env.DB.prepare("SELECT name FROM users WHERE id = ?").bind(userId).first<{ name: string }>();
  return row?.name ?? null;
}
