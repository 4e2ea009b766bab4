import { env } from "cloudflare:workers";
import { creditLedger, folders, photos, sessions, users } from "@db/schema";
import { db } from "@test/support/factories";
import { makePhoto, storedKeys } from "@test/support/photos";
import { makeTeam } from "@test/support/teams";
import { workerFetch } from "@test/support/worker";
import { userObject } from "@workers/objects/client";
import { createFixtureUser, removeFixtureUser } from "@workers/services/fixtures";
import { createFolder } from "@workers/services/library";
import { createTeamKey, teamRunnerId } from "@workers/services/teams/keys";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The one fixture-user service behind the workerd factory and /api/dev/users.

const deps = { db, env, bucket: env.PHOTOS };

describe("fixture users", () => {
  it("makes a verified user with credits through their object and a session", async () => {
    const made = await createFixtureUser(deps, { credits: 5, password: "a-long-password" }, { hashIterations: 1000 });
    expect(made.email).toMatch(/^e2e-[a-z0-9]{10}@example\.test$/);
    expect(made.sessionToken).toEqual(expect.any(String));
    const row = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, made.id) });
    expect(row).toMatchObject({ role: "user", credits: 5 });
    expect(row?.emailVerifiedAt).toEqual(expect.any(Number));
    expect(await userObject(env, made.id).balance(made.id)).toBe(5);
  });

  it("removes a user with their rows and their photos' bytes, and only theirs", async () => {
    const gone = await createFixtureUser(deps, { credits: 2 });
    const kept = await createFixtureUser(deps, {});
    await createFolder(db, gone.id, "Elm St");
    await makePhoto(gone.id);
    await makePhoto(kept.id);
    expect(await storedKeys(gone.id)).toHaveLength(2);

    expect(await removeFixtureUser(deps, gone.id)).toEqual({ ok: true, objects: 2 });
    expect(await storedKeys(gone.id)).toEqual([]);
    for (const table of [photos, folders, sessions, creditLedger]) {
      expect(await db.select().from(table).where(eq(table.userId, gone.id)).all()).toEqual([]);
    }
    expect(await db.select().from(users).where(eq(users.id, gone.id)).all()).toEqual([]);
    expect(await storedKeys(kept.id)).toHaveLength(2);

    expect(await removeFixtureUser(deps, gone.id)).toMatchObject({ ok: false, code: "not_found" });
  });

  it("is reached as DELETE /api/dev/users/:id, 404 for a user that is not there", async () => {
    const made = await createFixtureUser(deps, {});
    const del = (id: string) =>
      workerFetch(`/api/dev/users/${id}`, { method: "DELETE", headers: { Origin: "http://localhost" } });
    expect((await del(made.id)).status).toBe(200);
    expect((await del(made.id)).status).toBe(404);
  });

  it("a delete local R2 refuses is tried again; refused every time, it is a 409 and the user stays", async () => {
    const flaky = (failures: number) => {
      let left = failures;
      return new Proxy(env.PHOTOS, {
        get(target, prop) {
          if (prop === "delete" && left-- > 0) return async () => Promise.reject(new Error("object is being written"));
          const value = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    };
    const once = await createFixtureUser(deps, {});
    await makePhoto(once.id);
    expect(await removeFixtureUser({ db, bucket: flaky(2) }, once.id)).toEqual({ ok: true, objects: 2 });
    expect(await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, once.id) })).toBeUndefined();
    const never = await createFixtureUser(deps, {});
    await makePhoto(never.id);
    const res = await removeFixtureUser({ db, bucket: flaky(99) }, never.id);
    expect(res).toMatchObject({ ok: false, code: "conflict" });
    expect(await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, never.id) })).toBeDefined();
    expect(await removeFixtureUser(deps, never.id)).toEqual({ ok: true, objects: 2 });
  });

  it("the reservation bench never lets a balance go negative", async () => {
    const res = await workerFetch("/api/dev/bench/reservations", {
      method: "POST",
      headers: { Origin: "http://localhost", "Content-Type": "application/json" },
      body: JSON.stringify({ users: 2, perUser: 3 }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ attempts: 8, succeeded: 6, refused: 2, negative: false });
  });

  it("removes the runner account of a team the user owns, with its jobs, and leaves another team's runner", async () => {
    const owner = await createFixtureUser(deps, {});
    const other = await createFixtureUser(deps, {});
    const [mine, theirs] = [await makeTeam(owner.id), await makeTeam(other.id)];
    const keyDeps = { db, env, clock: () => Date.now() };
    expect((await createTeamKey(keyDeps, mine, owner.id, { name: "MLS feed", limit: null })).ok).toBe(true);
    expect((await createTeamKey(keyDeps, theirs, other.id, { name: "MLS feed", limit: null })).ok).toBe(true);
    const runner = async (teamId: string) =>
      db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, teamRunnerId(teamId)) });
    expect(await runner(mine)).toBeDefined();
    expect((await removeFixtureUser(deps, owner.id)).ok).toBe(true);
    expect(await runner(mine)).toBeUndefined();
    expect(await runner(theirs)).toBeDefined();
    await removeFixtureUser(deps, other.id);
  });
});
