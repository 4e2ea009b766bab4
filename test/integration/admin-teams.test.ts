import { env } from "cloudflare:workers";
import { makeJpeg } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { onPlan, photosOf } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { fakeStripe } from "@test/support/stripe";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { workerFetch } from "@test/support/worker";
import { userContext } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { teamObject } from "@workers/objects/client";
import type { CurrentUser } from "@workers/services/current-user";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import type { consoleTeam } from "@workers/services/teams/console";
import { RouterContextProvider } from "react-router";
import { beforeEach, describe, expect, it } from "vitest";
import { loader as teamLoader } from "~/routes/admin/team";
import { loader as teamsLoader } from "~/routes/admin/teams";

// The operator's console for teams (issue 47 item 6): /admin/teams lists every team with its seats and pool, and
// /admin/teams/:teamId shows one team's seats, pool and its ledger summed by member (a team API key as its own
// member). Read only; anyone but an admin gets the 404 every admin page gives. The loaders run here as React Router
// runs them, with the request's context.

beforeEach(() => {
  stubProvider();
});

function asUser(id: string, role: "user" | "admin"): CurrentUser {
  return {
    id,
    email: `${id}@example.test`,
    name: role,
    role,
    verified: true,
    credits: 0,
    plan: null,
    live: { credits: 0, plan: null },
    sessionId: "s",
  };
}

function contextFor(user: CurrentUser | null) {
  const context = new RouterContextProvider();
  context.set(userContext, user);
  context.set(requestContext, { env, db } as never);
  return context;
}

async function status(run: () => Promise<unknown>): Promise<number> {
  try {
    await run();
    return 200;
  } catch (thrown) {
    if (thrown instanceof Response) return thrown.status;
    const init = (thrown as { init?: { status?: number } }).init;
    if (init?.status) return init.status;
    throw thrown;
  }
}

const args = (user: CurrentUser | null, teamId?: string) =>
  ({
    context: contextFor(user),
    params: teamId === undefined ? {} : { teamId },
    request: new Request("http://localhost/admin/teams"),
  }) as never;

async function act(teamId: string, userId: string, fields: Record<string, string>) {
  const input = teamActionInput.parse(fields);
  const deps = {
    db,
    env,
    origin: "http://localhost",
    clock: () => Date.now(),
    mailer: { send: async () => {} },
    stripe: fakeStripe().stripe,
  };
  return runTeamAction(deps, teamId, userId, input);
}

async function settled(cookie: string, jobId: string) {
  for (let i = 0; i < 400; i++) {
    const res = await workerFetch(`/api/jobs/${jobId}`, { headers: { Cookie: cookie } });
    const body = (await res.json()) as { job: { status: string } };
    if (body.job.status === "succeeded" || body.job.status === "failed") return body.job.status;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the job did not settle");
}

describe("the admin console's teams", () => {
  it("shows an admin each team's seats and pool, and one team's ledger summed by member and by key", async () => {
    const owner = await onPlan(null, 0);
    const teamId = await makeTeam(owner.id, { credits: 10, seats: 4, name: "Console Realty" });
    const agent = await signedIn();
    const gone = await signedIn();
    await addMember(teamId, agent.id, "agent");
    await addMember(teamId, gone.id, "agent");
    expect((await act(teamId, owner.id, { intent: "remove", memberId: gone.id })).ok).toBe(true);
    // Two jobs by the agent in the team's listing, one through a team key.
    const listing = await teamFolder(teamId, agent.id);
    const photos = await photosOf(agent.id, 2, listing);
    for (const p of photos) {
      const res = await workerFetch(`/api/photos/${p.id}/jobs`, {
        method: "POST",
        headers: { Cookie: agent.cookie, Origin: "http://localhost", "Content-Type": "application/json" },
        body: JSON.stringify({ kind: "stage", roomType: "Bedroom", designStyle: "Modern" }),
      });
      expect(res.status).toBe(202);
      expect(await settled(agent.cookie, ((await res.json()) as { job: { id: string } }).job.id)).toBe("succeeded");
    }
    const made = await act(teamId, owner.id, { intent: "create-key", name: "Feed", limit: "" });
    expect(made.ok).toBe(true);
    const token = made.ok ? made.token! : "";
    const form = new FormData();
    form.append("file", new Blob([makeJpeg(64, 48, 80, 24, 7)], { type: "image/jpeg" }), "room.jpg");
    const auth = { Authorization: `Bearer ${token}` };
    const up = await workerFetch("/api/v1/photos", { method: "POST", headers: auth, body: form });
    const photoId = ((await up.json()) as { photo: { id: string } }).photo.id;
    const job = await workerFetch(`/api/v1/photos/${photoId}/jobs`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ kind: "stage", roomType: "Bedroom", designStyle: "Modern" }),
    });
    expect(job.status).toBe(202);
    const jobId = ((await job.json()) as { job: { id: string } }).job.id;
    for (let i = 0; i < 400; i++) {
      const j = (await (await workerFetch(`/api/v1/jobs/${jobId}`, { headers: auth })).json()) as {
        job: { status: string };
      };
      if (j.job.status === "succeeded") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await teamObject(env, teamId).reconcile(teamId);

    const admin = asUser(owner.id, "admin");
    const list = (await teamsLoader(args(admin))) as { teams: { id: string; seats: number; members: number }[] };
    expect(list.teams.find((t) => t.id === teamId)).toMatchObject({ seats: 4, members: 2, pool: 7 });

    const page = (await teamLoader(args(admin, teamId))) as Awaited<ReturnType<typeof consoleTeam>>;
    expect(page!.team).toMatchObject({ seats: 4, pool: 7, name: "Console Realty" });
    expect(page!.seatsTaken).toBe(2);
    expect(page!.members.map((m) => [m.userId, m.removedAt !== null])).toEqual([
      [owner.id, false],
      [agent.id, false],
      [gone.id, true],
    ]);
    const byLabel = Object.fromEntries(page!.ledger.map((l) => [l.label, [l.kind, l.sum, l.committed, l.held]]));
    expect(byLabel).toEqual({
      "Grants and adjustments": ["Billing", 10, 0, 0],
      [agent.email]: ["Agent", -2, 2, 0],
      Feed: ["Team API key", -1, 1, 0],
    });
    // The sums add up to the pool.
    expect(page!.ledgerTotal).toBe(7);
  });

  it("answers 404 to a signed-in non-admin, to nobody, and for a team that does not exist", async () => {
    const owner = await onPlan(null, 0);
    const teamId = await makeTeam(owner.id, { credits: 2 });
    // The team's own owner is not the operator.
    for (const user of [asUser(owner.id, "user"), null]) {
      expect(await status(() => teamsLoader(args(user)))).toBe(404);
      expect(await status(() => teamLoader(args(user, teamId)))).toBe(404);
    }
    expect(await status(() => teamLoader(args(asUser(owner.id, "admin"), "nosuchteam")))).toBe(404);
    expect(await status(() => teamLoader(args(asUser(owner.id, "admin"), teamId)))).toBe(200);
  });
});
