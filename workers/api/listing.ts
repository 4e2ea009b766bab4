import { readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { batchView, recentBatches, retryBatch, startBatch, viewableBatch } from "@workers/services/jobs/batches";
import { anyObject } from "@workers/services/jobs/request";
import { reroll, rerollQuote } from "@workers/services/jobs/rerolls";
import {
  ChangedRoomBody,
  chooseVersion,
  confirmStructure,
  keepRefusedVersion,
  returnChangedRoom,
} from "@workers/services/jobs/versions";
import { LookRequest, useAsLook } from "@workers/services/listing-look";
import { Hono } from "hono";
import { NOT_FOUND } from "~/shared/result";
import { answerHeaders, NO_STORE, requestKey } from "./answers";
import { requireReachablePhoto } from "./photo-scope";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// Staging a whole listing (issue 15): batches and their progress, retries of
// failures, re-rolls (the price said first), the chosen version of a photo and
// the listing's look (docs/decisions/0190-one-look-for-a-listing.md).
// Only the owner sees any of it; anyone else gets the same 404 as for nothing.

export const listingApi = new Hono<ApiEnv>()
  .use("/batches", requireApiUser)
  .use("/batches/*", requireApiUser)
  .use("/jobs/*", requireApiUser)
  .use("/photos/*", requireApiUser)
  .use("/photos/:id/*", requireReachablePhoto)
  .post("/batches", async (c) => {
    const body = await readJson(c.req.raw, anyObject);
    if (!body.ok) return failureJson(body);
    const res = await startBatch(c.get("deps"), c.get("user")!.id, body.data);
    if (!res.ok) return failureJson(res);
    const batch = await batchView(c.get("db"), c.get("user")!.id, res.batchId);
    return c.json({ batch, credits: res.credits }, 202, NO_STORE);
  })
  .get("/batches", async (c) => {
    return c.json({ batches: await recentBatches(c.get("db"), c.get("user")!.id, 10) }, 200, NO_STORE);
  })
  .get("/batches/:id", async (c) => {
    // The member's own, or a team batch to an active member of its team (docs/decisions/0317).
    const found = await viewableBatch(c.get("db"), c.get("user")!.id, c.req.param("id"));
    if (!found) return failureJson(NOT_FOUND);
    return c.json({ batch: found.view }, 200, NO_STORE);
  })
  .post("/batches/:id/retry", async (c) => {
    // With an Idempotency-Key, the same retry sent again answers with what it started (jobs/batches.ts, retryBatch).
    const key = requestKey(c.req.raw.headers);
    if (key instanceof Response) return key;
    const res = await retryBatch(c.get("deps"), c.get("user")!.id, c.req.param("id"), key.key ?? undefined);
    if (!res.ok) return failureJson(res);
    return c.json({ retried: res.retried, credits: res.credits }, 202, answerHeaders(res.replayed));
  })
  .get("/jobs/:id/reroll", async (c) => {
    const res = await rerollQuote(c.get("db"), c.get("user")!.id, c.req.param("id"), Date.now());
    if (!res.ok) return failureJson(res);
    return c.json({ quote: res.quote }, 200, NO_STORE);
  })
  .post("/jobs/:id/reroll", async (c) => {
    // The page sends a key with each re-roll (app/lib/use-job.ts): sent again, it starts and charges nothing more.
    const key = requestKey(c.req.raw.headers);
    if (key instanceof Response) return key;
    const body = await readJson(c.req.raw, anyObject);
    if (!body.ok) return failureJson(body);
    const res = await reroll(c.get("deps"), c.get("user")!.id, c.req.param("id"), {
      acceptCharge: body.data.acceptCharge === true,
      submission: key.key ?? undefined,
    });
    if (!res.ok) return failureJson(res);
    return c.json({ job: res.job, cost: res.cost, credits: res.credits }, 202, answerHeaders(res.replayed));
  })
  .post("/photos/:id/versions/:versionId/choose", async (c) => {
    const res = await chooseVersion(
      c.get("db"),
      c.get("user")!.id,
      c.req.param("id"),
      c.req.param("versionId"),
      Date.now(),
    );
    if (!res.ok) return failureJson(res);
    return c.json({ versionId: res.versionId }, 200, NO_STORE);
  })
  // "Use this look for the listing": the version becomes the style reference of its photo's folder.
  .post("/photos/:id/versions/:versionId/look", async (c) => {
    const body = await readJson(c.req.raw, LookRequest);
    if (!body.ok) return failureJson(body);
    const { id, versionId } = c.req.param();
    const res = await useAsLook(c.get("db"), c.get("user")!.id, id, versionId, body.data.strength);
    if (!res.ok) return failureJson(res);
    return c.json({ look: res.look }, 200, NO_STORE);
  })
  .post("/photos/:id/versions/:versionId/keep", async (c) => {
    const user = c.get("user")!;
    const res = await keepRefusedVersion(c.get("deps"), user.id, c.req.param("id"), c.req.param("versionId"));
    if (!res.ok) return failureJson(res);
    return c.json({ versionId: res.versionId, credits: res.credits }, 200, NO_STORE);
  })
  // "This result changed the room": its credit back, once, within 7 days (docs/decisions/0261); a team job's to the
  // team's pool (`returnedTo: "team"`, `pool`), `credits` the user's own balance either way.
  .post("/photos/:id/versions/:versionId/changed-room", async (c) => {
    const body = await readJson(c.req.raw, ChangedRoomBody);
    if (!body.ok) return failureJson(body);
    const { id, versionId } = c.req.param();
    const res = await returnChangedRoom(c.get("deps"), c.get("user")!.id, id, versionId, body.data.keepPair === true);
    if (!res.ok) return failureJson(res);
    const { versionId: returned, credits, kept, returnedTo, pool } = res;
    return c.json({ versionId: returned, credits, kept, returnedTo, pool }, 200, NO_STORE);
  })
  // "I checked the walls and windows": a flagged result may then go into a listing (docs/decisions/0215).
  .post("/photos/:id/versions/:versionId/confirm-structure", async (c) => {
    const { db, clock } = c.get("deps");
    const res = await confirmStructure(db, c.get("user")!.id, c.req.param("id"), c.req.param("versionId"), clock());
    if (!res.ok) return failureJson(res);
    return c.json({ versionId: res.versionId, confirmedAt: res.confirmedAt }, 200, NO_STORE);
  });
