import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createDb } from "@db/client";
import { makeJpeg } from "@test/fixtures/images";
import { db, makeUser } from "@test/support/factories";
import { api, folderOf, onPlan, photosOf, settleJob } from "@test/support/listing";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { makeTeam, teamFolder } from "@test/support/teams";
import { api as apiApp } from "@workers/api";
import { aroundD1 } from "@workers/lib/injected-latency";
import { createApiKey } from "@workers/services/api-keys";
import { requestJob } from "@workers/services/jobs/start";
import { beforeEach, describe, expect, it } from "vitest";

// The D1 round trips a job request makes in the Worker before it reaches the user's object (issue 44: in production
// each is a round trip to D1, on the way to the provider call). The photo is read once, with its owner, team and
// whether its folder names a listing look (92f10f9); a second read is made only for what needs one.

beforeEach(() => {
  stubProvider().answer = () => [makeJpeg(64, 48, 80)];
});

/** env.DB, counting each round trip (a statement's first, all, run or raw; a batch) with its SQL. */
function counted(d1: D1Database) {
  const trips: string[] = [];
  return { deps: { db: createDb(aroundD1(d1, (what) => void trips.push(what))), env }, trips };
}

const STAGE = { kind: "stage" as const, roomType: "Bedroom", designStyle: "Scandinavian" };

describe("a job request's D1 reads before the user's object", () => {
  it("a staging from the original reads the photo once", async () => {
    const user = await makeUser({ credits: 2 });
    const photo = await makePhoto(user.id);
    const { deps, trips } = counted(env.DB);
    const res = await requestJob(deps, user.id, photo.id, STAGE);
    expect(res.ok).toBe(true);
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatch(/from "photos"/);
  });

  it("a staging in a folder that names a listing look reads the look too, and nothing more", async () => {
    const user = await onPlan(null, 10);
    const folderId = await folderOf(user.id);
    const [ref, other] = await photosOf(user.id, 2, folderId);
    const staged = await api(user.cookie, "POST", `/api/photos/${ref!.id}/jobs`, STAGE);
    const job = await settleJob(user.cookie, staged.body.job.id);
    const look = await api(user.cookie, "POST", `/api/photos/${ref!.id}/versions/${job.versionId}/look`, {});
    expect(look.status).toBe(200);
    const { deps, trips } = counted(env.DB);
    const res = await requestJob(deps, user.id, other!.id, STAGE);
    const params = res.ok && "params" in res.job ? res.job.params : null;
    expect(params?.styleReference).toMatchObject({ photoId: ref!.id, versionId: job.versionId });
    expect(trips).toHaveLength(2);
  });

  it("a removal reads the photo once, then where it starts from", async () => {
    const user = await makeUser({ credits: 2 });
    const photo = await makePhoto(user.id);
    const { deps, trips } = counted(env.DB);
    const res = await requestJob(deps, user.id, photo.id, { kind: "removal" });
    expect(res.ok).toBe(true);
    expect(trips).toHaveLength(2);
  });

  it("a stranger's photo is not found after that one read", async () => {
    const [owner, stranger] = [await makeUser({ credits: 2 }), await makeUser({ credits: 2 })];
    const photo = await makePhoto(owner.id);
    const { deps, trips } = counted(env.DB);
    const res = await requestJob(deps, stranger.id, photo.id, STAGE);
    expect(res.ok).toBe(false);
    expect(trips).toHaveLength(1);
  });

  it("the public API under a personal key reads the photo once, in a personal folder and in a team listing", async () => {
    const member = await onPlan("Starter plan", 4);
    const team = await makeTeam(member.id, { credits: 5 });
    const [personal] = await photosOf(member.id, 1);
    const [listed] = await photosOf(member.id, 1, await teamFolder(team, member.id));
    const made = await createApiKey({ db, env, clock: () => Date.now() }, member.id, {
      name: "crm",
      scopes: ["stage"],
    });
    if (!made.ok) throw new Error(made.error);
    for (const photo of [personal!, listed!]) {
      const trips: string[] = [];
      const counting = { ...env, DB: aroundD1(env.DB, (what) => void trips.push(what)) };
      const ctx = createExecutionContext();
      const res = await apiApp.fetch(
        new Request(`http://localhost/api/v1/photos/${photo.id}/jobs`, {
          method: "POST",
          headers: { Authorization: `Bearer ${made.token}`, "Content-Type": "application/json" },
          body: JSON.stringify(STAGE),
        }),
        counting,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status, await res.text()).toBe(202);
      // The key's own reads (who holds it, its rate) aside: the photo's row is read once.
      expect(trips.filter((sql) => /from "photos"/.test(sql))).toHaveLength(1);
    }
  });
});
