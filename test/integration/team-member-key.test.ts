import { env } from "cloudflare:workers";
import { creditLedger, folders, photos, teamLedger, teamMembers, teamReservations, teams, users } from "@db/schema";
import { db } from "@test/support/factories";
import { balance, onPlan, photosOf } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { apiV1, workerFetch } from "@test/support/worker";
import { userContext } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { teamObject } from "@workers/objects/client";
import { createApiKey } from "@workers/services/api-keys";
import type { CurrentUser } from "@workers/services/current-user";
import { stateDigest } from "@workers/services/fixtures";
import { runLibraryAction } from "@workers/services/library-actions";
import { and, eq } from "drizzle-orm";
import { RouterContextProvider } from "react-router";
import { beforeEach, describe, expect, it } from "vitest";
import { action as photoAction } from "~/routes/photos/photo";
import { TEAM_POOL_EMPTY } from "~/shared/teams";

// A member's personal API key on a team listing's photo (ADR 0270's amendment of 2026-11-29): the key acts as its
// member, so the job spends the team's pool under the member's name, as the page's job does; a stranger's key and a
// removed member's key are the 404 of a made-up photo; an empty pool is refused in its words with no provider call.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };
const digest = () => stateDigest({ env, bucket: env.PHOTOS });

async function keyFor(userId: string) {
  const made = await createApiKey({ db, env, clock: () => Date.now() }, userId, {
    name: "my CRM",
    scopes: ["stage", "read"],
  });
  if (!made.ok) throw new Error(made.error);
  return made.token;
}

const call = apiV1;

async function settle(token: string, jobId: string) {
  for (let i = 0; i < 400; i++) {
    const body = (await (await call(token, `/jobs/${jobId}`)).json()) as {
      job: { status: string };
      version: { id: string } | null;
    };
    if (body.job.status === "succeeded" || body.job.status === "failed") return body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the job did not settle");
}

const poolOf = async (teamId: string) =>
  (await db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)).get())!.credits;

/** A team with a pool, its listing holding a teammate's photo, and an agent with 3 credits of their own and a key. */
async function setup(pool: number) {
  const owner = await onPlan(null, 0);
  const teamId = await makeTeam(owner.id, { credits: pool });
  const folderId = await teamFolder(teamId, owner.id);
  const agent = await onPlan("Starter plan", 3);
  await db.update(users).set({ name: "Andy Agent" }).where(eq(users.id, agent.id));
  const mate = await onPlan("Starter plan", 3);
  await addMember(teamId, agent.id);
  await addMember(teamId, mate.id);
  const [photo] = await photosOf(mate.id, 1, folderId);
  return { owner, teamId, folderId, agent, mate, photo: photo!, token: await keyFor(agent.id) };
}

describe("a member's personal API key on a team listing's photo", () => {
  it("stages on the team's pool under the member's name, once per Idempotency-Key; the member's own credits untouched", async () => {
    const { teamId, agent, photo, token } = await setup(4);
    const first = await call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE, idem: "k1" });
    expect(first.status).toBe(202);
    const { job, credits } = (await first.json()) as { job: { id: string }; credits: number };
    // The answer's credits are the pool the job was paid from.
    expect(credits).toBe(3);
    const again = await call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE, idem: "k1" });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { job: { id: string } }).job.id).toBe(job.id);
    const reused = await call(token, `/photos/${photo.id}/jobs`, {
      method: "POST",
      json: { ...STAGE, designStyle: "Industrial" },
      idem: "k1",
    });
    expect(reused.status).toBe(409);

    const settled = await settle(token, job.id);
    expect(settled.job.status).toBe("succeeded");
    // The result is the teammate's photo's version, read for the member.
    expect(settled.version).toMatchObject({ id: expect.any(String) });
    await teamObject(env, teamId).reconcile(teamId);
    expect(provider.calls).toHaveLength(1);
    expect(await poolOf(teamId)).toBe(3);
    expect(await balance(agent.id)).toBe(3);
    const held = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
    expect(held.map((r) => [r.jobId, r.memberId, r.status])).toEqual([[job.id, agent.id, "committed"]]);
    const ledger = await db.select().from(teamLedger).where(eq(teamLedger.teamId, teamId)).all();
    expect(ledger.filter((r) => r.kind !== "grant").every((r) => r.memberId === agent.id)).toBe(true);
    const own = await db.select().from(creditLedger).where(eq(creditLedger.userId, agent.id)).all();
    expect(own.filter((r) => r.kind !== "grant").every((r) => r.amount === 0)).toBe(true);
  });

  it("an empty pool refuses in the pool's words, before any provider call, nothing taken from the member", async () => {
    const { teamId, agent, photo, token } = await setup(0);
    const before = await digest();
    const res = await call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe(TEAM_POOL_EMPTY);
    expect(provider.calls).toHaveLength(0);
    expect(await digest()).toEqual(before);
    expect(await balance(agent.id)).toBe(3);
    expect(await poolOf(teamId)).toBe(0);
  });

  it("a stranger's key and a removed member's key are the 404 of a made-up photo; nothing written", async () => {
    const { teamId, agent, photo, token, mate } = await setup(4);
    const stranger = await onPlan("Starter plan", 3);
    const strangerKey = await keyFor(stranger.id);
    // The agent's job, finished before the removal: afterwards its status is a 404 too.
    const started = await call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE });
    const { job } = (await started.json()) as { job: { id: string } };
    await settle(token, job.id);
    await teamObject(env, teamId).reconcile(teamId);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, agent.id)));
    const before = await digest();
    const madeUp = await call(strangerKey, "/photos/nosuchphoto/jobs", { method: "POST", json: STAGE });
    expect(madeUp.status).toBe(404);
    const madeUpBody = await madeUp.json();
    for (const key of [strangerKey, token]) {
      const res = await call(key, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(madeUpBody);
    }
    const status = await call(token, `/jobs/${job.id}`);
    expect(status.status).toBe(404);
    expect(await digest()).toEqual(before);
    expect(provider.calls).toHaveLength(1);
    expect(await poolOf(teamId)).toBe(3);
    expect(mate).toBeTruthy();
  });

  it("a removed member's key and photo page reach none of the results of their own upload in the listing", async () => {
    const { teamId, folderId, agent, token } = await setup(4);
    const [upload] = await photosOf(agent.id, 1, folderId);
    const started = await call(token, `/photos/${upload!.id}/jobs`, { method: "POST", json: STAGE });
    const { version } = await settle(token, ((await started.json()) as { job: { id: string } }).job.id);
    await teamObject(env, teamId).reconcile(teamId);
    const listed = await call(token, `/photos/${upload!.id}/versions`);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { versions: { id: string }[] }).versions.map((v) => v.id)).toEqual([version!.id]);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, agent.id)));
    const before = await digest();
    // Every route of the public API under a photo, from its OpenAPI document: the rows are still the agent's.
    const doc = (await (await workerFetch("/api/v1/openapi.json")).json()) as { paths: Record<string, object> };
    const routes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/photos/{photoId}"))
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => [method.toUpperCase(), path] as const));
    expect(routes.length).toBeGreaterThanOrEqual(7);
    for (const [method, path] of routes) {
      const url = path.replace("{photoId}", upload!.id).replace("{versionId}", version!.id);
      const madeUp = path.replace("{photoId}", "nosuchphoto").replace("{versionId}", "nosuchversion");
      for (const query of method === "GET" && path.endsWith("/download") ? ["", "?disclosure=none"] : [""]) {
        const init = method === "POST" ? { method, json: STAGE, idem: "x" } : {};
        const res = await call(token, url + query, init);
        expect(res.status, `${method} ${path}${query}`).toBe(404);
        // The answer a made-up photo gets from the same route.
        expect(await res.json()).toEqual(await (await call(token, madeUp + query, init)).json());
      }
    }
    // The photo page's result intents, "I checked the walls and windows" and "This result changed the room", as
    // React Router runs the page's action.
    for (const intent of ["confirm-structure", "changed-room"]) {
      const context = new RouterContextProvider();
      context.set(userContext, { id: agent.id, role: "user", verified: true } as CurrentUser);
      context.set(requestContext, { env, db, deps: { db, env, clock: () => Date.now() } } as never);
      const request = new Request(`http://localhost/photos/${upload!.id}`, {
        method: "POST",
        body: new URLSearchParams({ intent, versionId: version!.id }),
      });
      const answered = (await photoAction({ request, params: { id: upload!.id }, context } as never)) as {
        init?: { status?: number };
      };
      expect(answered.init?.status, intent).toBe(404);
    }
    expect(await digest()).toEqual(before);
  });

  it("a personal job whose photo moved into the team's listing: its GET /jobs/{id} is a 404 once the member is removed", async () => {
    const { teamId, folderId, agent, token } = await setup(4);
    const [own] = await photosOf(agent.id, 1);
    const started = await call(token, `/photos/${own!.id}/jobs`, { method: "POST", json: STAGE });
    const jobId = ((await started.json()) as { job: { id: string } }).job.id;
    await settle(token, jobId);
    await db.update(photos).set({ folderId }).where(eq(photos.id, own!.id));
    expect((await call(token, `/jobs/${jobId}`)).status).toBe(200);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, agent.id)));
    const res = await call(token, `/jobs/${jobId}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(await (await call(token, "/jobs/nosuchjob")).json());
  });

  it("a request sent again after its photo's folder moved into the team answers the first job, charged once", async () => {
    const owner = await onPlan("Starter plan", 3);
    const teamId = await makeTeam(owner.id, { credits: 5 });
    const made = await runLibraryAction({ db, bucket: env.PHOTOS }, owner.id, {
      intent: "create-folder",
      name: "3 Dock Lane",
    });
    expect(made.ok).toBe(true);
    const own = (await db.select().from(folders).where(eq(folders.userId, owner.id)).get())!;
    const [photo] = await photosOf(owner.id, 1, own.id);
    const token = await keyFor(owner.id);
    const send = (body: object) =>
      call(token, `/photos/${photo!.id}/jobs`, { method: "POST", json: body, idem: "d-1" });
    const first = await send(STAGE);
    expect(first.status).toBe(202);
    const { job } = (await first.json()) as { job: { id: string } };
    await settle(token, job.id);
    const moved = await runLibraryAction({ db, bucket: env.PHOTOS }, owner.id, {
      intent: "folder-to-team",
      folderId: own.id,
      teamId,
    });
    expect(moved.ok).toBe(true);
    const again = await send(STAGE);
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(((await again.json()) as { job: { id: string } }).job.id).toBe(job.id);
    const reused = await send({ ...STAGE, designStyle: "Industrial" });
    expect(reused.status).toBe(409);
    await teamObject(env, teamId).reconcile(teamId);
    expect(provider.calls).toHaveLength(1);
    expect(await balance(owner.id)).toBe(2);
    expect(await poolOf(teamId)).toBe(5);
  });
});
