import { readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { clearBenchLabels, seedBenchListing } from "@workers/services/bench-labels";
import {
  benchBalance,
  benchJobTimings,
  benchReservations,
  createFixtureUser,
  finishedJobsInput,
  fixtureUserInput,
  removeFixtureUser,
  seedFinishedJobs,
  setStructureLimits,
  stateDigest,
  structureLimitsInput,
} from "@workers/services/fixtures";
import { closeSoldListings } from "@workers/services/mls/listing-status";
import { seedDemoUsers } from "@workers/services/seed";
import { refreshSiteFigures } from "@workers/services/site-figures";
import { Hono } from "hono";
import { z } from "zod";
import type { ApiEnv } from "./types";

// Development and test fixtures. Mounted under /api/dev only when the local
// configuration turns dev tools on (see workers/api/index.ts).

export const devApi = new Hono<ApiEnv>()
  // A digest of every D1 table and every R2 object, so a test can prove that a
  // refused request changed nothing.
  .get("/state", async (c) => c.json(await stateDigest(c.get("deps"))))
  .post("/seed", async (c) => {
    const seeded = await seedDemoUsers(c.get("db"), c.env);
    return c.json({ ok: true, users: seeded });
  })
  // Creates a user (and a session) for an end-to-end test, so each test owns
  // its data instead of sharing the demo users.
  .post("/users", async (c) => {
    const parsed = await readJson(c.req.raw, fixtureUserInput);
    if (!parsed.ok) return failureJson(parsed);
    // A fixture has exactly the credits it asks for: no trial credits on top at its first sign-in.
    return c.json(await createFixtureUser(c.get("deps"), parsed.data, { trialSettled: true }), 201);
  })
  // Removes a user made above with their photos (bytes too), after each e2e test.
  .delete("/users/:id", async (c) => {
    const res = await removeFixtureUser(c.get("deps"), c.req.param("id"));
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true, objects: res.objects });
  })
  // The structure check's limits for one user's results (null: production's), so a test can run a refusal.
  .put("/users/:id/structure-limits", async (c) => {
    const parsed = await readJson(c.req.raw, structureLimitsInput, { methods: ["PUT"] });
    if (!parsed.ok) return failureJson(parsed);
    await setStructureLimits(c.get("deps"), c.req.param("id"), parsed.data);
    return c.json({ ok: true });
  })
  // The daily cron's closing of sold listings' original pages, run as if it were `now` (ms): how an end-to-end
  // test moves the clock past a listing's closing day (docs/decisions/0170-mls-profiles.md).
  .post("/cron/listings", async (c) => {
    const parsed = await readJson(c.req.raw, z.object({ now: z.number().int().min(0) }));
    if (!parsed.ok) return failureJson(parsed);
    return c.json({ ok: true, closed: await closeSoldListings(c.get("db"), parsed.data.now) });
  })
  // Finished jobs with known outcomes and times for the landing page's figures; the stored figures are computed
  // again at once, so the next GET /api/figures counts them.
  .post("/finished-jobs", async (c) => {
    const parsed = await readJson(c.req.raw, finishedJobsInput);
    if (!parsed.ok) return failureJson(parsed);
    const res = await seedFinishedJobs(c.get("deps"), parsed.data);
    if (!res.ok) return failureJson(res);
    await refreshSiteFigures(c.get("db"), c.get("deps").clock());
    return c.json({ ok: true, jobs: res.jobs }, 201);
  })
  // Benchmark: one user's balance from their object, the second request of bench/object.ts (npm run bench).
  .get("/bench/balance/:userId", async (c) => {
    const res = await benchBalance(c.get("deps"), c.req.param("userId"));
    if (!res.ok) return failureJson(res);
    return c.json({ credits: res.credits });
  })
  // Benchmark: where the user's last jobs' time went (bench/job-split.ts; docs/decisions/0226).
  .get("/bench/job-timings/:userId", async (c) => {
    const res = await benchJobTimings(c.get("deps"), c.req.param("userId"));
    if (!res.ok) return failureJson(res);
    return c.json({ jobs: res.jobs });
  })
  // Benchmark: concurrent reservations through the users' objects (npm run bench).
  .post("/bench/reservations", async (c) => {
    const parsed = await readJson(
      c.req.raw,
      z.object({ users: z.number().int().min(1).max(200), perUser: z.number().int().min(1).max(500) }),
    );
    if (!parsed.ok) return failureJson(parsed);
    return c.json(await benchReservations(c.get("deps"), parsed.data.users, parsed.data.perUser));
  })
  // Benchmark: a listing of N photos with staged results, the body being the result's bytes (bench/labels.ts).
  .post("/bench/listing/:userId", async (c) => {
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const res = await seedBenchListing(c.get("deps"), c.req.param("userId"), Number(c.req.query("photos")), bytes);
    if (!res.ok) return failureJson(res);
    return c.json({ folderId: res.folderId, versions: res.versions }, 201);
  })
  // Benchmark: the user's rendered labels deleted, so the next run renders every label cold (bench/labels.ts).
  .delete("/bench/labels/:userId", async (c) => {
    const res = await clearBenchLabels(c.get("deps"), c.req.param("userId"));
    return c.json({ deleted: res.deleted });
  });
