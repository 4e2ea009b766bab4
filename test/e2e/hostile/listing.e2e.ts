import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import {
  CONTROL_CHARS,
  expectRefusedWithoutChange,
  form,
  type HostileCase,
  SQL_META,
  waitForQuietState,
} from "./harness.ts";

// Hostile input for staging a whole listing (docs/decisions/0140-batches-variations-rerolls.md): batches,
// retries, variations, re-rolls, the chosen version and staging from a version, by the owner with bad input
// and by a stranger with the owner's ids. Each is refused with a 4xx and changes nothing stored.

let owner: FixtureUser;
let stranger: FixtureUser;
let ran = 0;
const f = {
  photoId: "",
  otherPhotoId: "",
  jobId: "",
  removalJobId: "",
  versionId: "",
  batchId: "",
  batchJobId: "",
  folderId: "",
  /** A listing of the owner's team (the stranger is no member; the new team's pool is empty), and a photo in it. */
  teamFolderId: "",
  teamPhotoId: "",
  /** The owner's team: the library's batch page may be paid by it (ADR 0318). */
  teamId: "",
};

const headers = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });
/** The key the owner's staged job was started with. */
const OWNER_KEY = "hostile-owner-key";
/** The key the owner's free re-roll of that job was started with. */
const OWNER_REROLL_KEY = "hostile-owner-reroll-key";

async function call(u: FixtureUser, method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
  const isForm = body instanceof URLSearchParams;
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    redirect: "manual",
    headers: {
      ...headers(u),
      Origin: baseUrl(),
      ...(body !== undefined && !isForm ? { "Content-Type": "application/json" } : {}),
      ...extra,
    },
    body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : {} };
}

async function settle(jobId: string) {
  for (let i = 0; i < 120; i++) {
    const r = await call(owner, "GET", `/api/jobs/${jobId}`);
    if (r.body.job.status === "succeeded") return r.body.job as { versionId: string };
    if (r.body.job.status === "failed") throw new Error("job failed");
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error("job did not settle");
}

beforeAll(async () => {
  await fetch(`http://127.0.0.1:${inject("ports").provider}/_emulator/mode`, {
    method: "POST",
    body: JSON.stringify({ mode: "ok" }),
  });
  owner = await createUser({ credits: 4 });
  stranger = await createUser({ credits: 5 });
  const seeded = await seedPhotos({ baseUrl: baseUrl(), sessionToken: owner.sessionToken! }, 3, "Den");
  f.photoId = seeded[0]!;
  f.otherPhotoId = seeded[1]!;
  f.teamPhotoId = seeded[2]!;
  // Started as the page starts it, with a key (docs/decisions/0148-page-job-requests-sent-once.md).
  const staged = await call(
    owner,
    "POST",
    `/api/photos/${f.photoId}/jobs`,
    { kind: "stage", roomType: "livingroom", designStyle: "modern" },
    { "Idempotency-Key": OWNER_KEY },
  );
  f.jobId = staged.body.job.id;
  f.versionId = (await settle(f.jobId)).versionId;
  const removal = await call(owner, "POST", `/api/photos/${f.photoId}/jobs`, { kind: "removal" });
  f.removalJobId = removal.body.job.id;
  await settle(f.removalJobId);
  const batch = await call(owner, "POST", "/api/batches", {
    designStyle: "modern",
    items: [{ photoId: f.otherPhotoId, roomType: "bedroom" }],
  });
  f.batchId = batch.body.batch.id;
  f.batchJobId = batch.body.batch.items[0].jobId;
  // The free re-roll of the staged job, with a key as the page sends it.
  const rerolled = await call(
    owner,
    "POST",
    `/api/jobs/${f.jobId}/reroll`,
    {},
    { "Idempotency-Key": OWNER_REROLL_KEY },
  );
  await settle(rerolled.body.job.id);
  // The library's folder links, and a folder made through the dashboard's form: the one link that is new.
  const folderIds = async () =>
    new Set(
      [
        ...(await (await fetch(`${baseUrl()}/dashboard`, { headers: headers(owner) })).text()).matchAll(
          /folder=([a-z2-7]+)/g,
        ),
      ].map((m) => m[1]!),
    );
  const newFolder = async (name: string) => {
    const before = await folderIds();
    await call(owner, "POST", "/dashboard", new URLSearchParams({ intent: "create-folder", name }));
    return [...(await folderIds())].find((id) => !before.has(id)) ?? "";
  };
  f.folderId = await newFolder("Hostile listing");
  // A team listing (ADR 0280) with a photo: its batches spend the team's pool (ADR 0310), which a new team has empty.
  const madeTeam = await fetch(`${baseUrl()}/teams`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers(owner), Origin: baseUrl(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ intent: "create-team", name: "Hostile team" }).toString(),
  });
  const teamId = /\/teams\/([a-z0-9]+)$/.exec(madeTeam.headers.get("Location") ?? "")?.[1] ?? "";
  f.teamFolderId = await newFolder("Team listing");
  await call(
    owner,
    "POST",
    "/dashboard",
    new URLSearchParams({ intent: "move", photoId: f.teamPhotoId, folderId: f.teamFolderId }),
  );
  const toTeam = await call(
    owner,
    "POST",
    "/dashboard",
    new URLSearchParams({ intent: "folder-to-team", folderId: f.teamFolderId, teamId }),
  );
  expect(teamId && toTeam.status < 400 && f.teamFolderId).toBeTruthy();
  f.teamId = teamId;
  // Wait for the batch to end, so the digest does not move under the cases.
  for (let i = 0; i < 120; i++) {
    const view = await call(owner, "GET", `/api/batches/${f.batchId}`);
    if (!view.body.batch.open) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  // The owner has 1 credit left: a batch of 2 is more than they have.
  expect((await call(owner, "GET", "/api/me")).body.credits).toBe(1);
  expect(f.folderId && f.versionId && f.batchId && f.batchJobId).toBeTruthy();
  // Jobs' thumbnails land after their commits: settled before the cases compare digests.
  await waitForQuietState();
}, 120_000);

afterAll(() => {
  console.log(`hostile-input suite (listing routes): ${ran} cases ran`);
});

function cases(): HostileCase[] {
  const o = headers(owner);
  const s = headers(stranger);
  const item = (photoId: string, roomType = "bedroom") => ({ photoId, roomType });
  const batch = (items: unknown, extra: Record<string, unknown> = {}) => ({ designStyle: "modern", items, ...extra });
  const manyItems = Array.from({ length: 101 }, (_, i) => item(`p${i}`));
  // An otherwise valid request of the owner's under a key that is not 1-255 visible ASCII characters: 400.
  const malformedKeys = (what: string, path: string, body: Record<string, unknown>) =>
    ["with space", "k".repeat(256), ""].map(
      (key): HostileCase => ({
        name: `${what} Idempotency-Key "${key.slice(0, 12)}" (${key.length} characters)`,
        method: "POST",
        path,
        headers: { ...o, "Idempotency-Key": key },
        body,
        status: 400,
        message: /visible ASCII/,
      }),
    );
  // The owner's key sent again with a different request: 409. A stranger's request under the owner's key is the
  // stranger's own (the key names rows only with the sender's id), for a thing that is not theirs: 404.
  const reusedKey = (name: string, path: string, key: string, body: Record<string, unknown>): HostileCase => ({
    name,
    method: "POST",
    path,
    headers: { ...o, "Idempotency-Key": key },
    body,
    status: 409,
    message: /already used for a different request/,
  });
  const strangerWithKey = (name: string, path: string, key: string, body: Record<string, unknown>): HostileCase => ({
    name,
    method: "POST",
    path,
    headers: { ...s, "Idempotency-Key": key },
    body,
    status: 404,
  });
  return [
    // POST /api/batches
    {
      name: "stranger stages the owner's photo",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: batch([item(f.photoId)]),
      status: 404,
    },
    {
      name: "stranger names the owner's folder",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: batch([], { folderId: f.folderId }),
      status: 400,
    },
    {
      name: "stranger's folder id with own photo list",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: { designStyle: "modern", folderId: f.folderId, items: [item("x".repeat(20))] },
      status: 404,
    },
    {
      name: "no photos",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([]),
      status: 400,
      message: /at least one photo/,
    },
    {
      name: "101 photos",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch(manyItems),
      status: 400,
      message: /at most 100/,
    },
    {
      name: "a photo twice",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.photoId), item(f.photoId)]),
      status: 400,
      message: /twice/,
    },
    {
      name: "unknown room type",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.photoId, SQL_META)]),
      status: 400,
    },
    {
      name: "no style",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: { items: [item(f.photoId)] },
      status: 400,
    },
    {
      name: "items not a list",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch("everything"),
      status: 400,
    },
    {
      name: "advanced options without the plan",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.photoId)], { colorScheme: "COLOR_SCHEME_3" }),
      status: 403,
    },
    {
      name: "more photos than credits",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.photoId), item(f.otherPhotoId)]),
      status: 402,
    },
    {
      name: "a form, not JSON",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: form({ designStyle: "modern" }),
      status: 415,
    },
    { name: "no session", method: "POST", path: "/api/batches", body: batch([item(f.photoId)]), status: 401 },
    // Batches: reading and retrying
    {
      name: "stranger reads the owner's batch",
      method: "GET",
      path: `/api/batches/${f.batchId}`,
      headers: s,
      status: 404,
    },
    {
      name: "stranger retries the owner's batch",
      method: "POST",
      path: `/api/batches/${f.batchId}/retry`,
      headers: s,
      status: 404,
    },
    {
      name: "retry with nothing failed",
      method: "POST",
      path: `/api/batches/${f.batchId}/retry`,
      headers: o,
      status: 409,
    },
    // The retry's key (docs/decisions/0140, update of 2026-11-24): checked before anything, never a way in.
    ...malformedKeys("a batch retry's", `/api/batches/${f.batchId}/retry`, {}),
    strangerWithKey("stranger retries the owner's batch under a key", `/api/batches/${f.batchId}/retry`, "k-1", {}),
    {
      name: "retry under a fresh key with nothing failed",
      method: "POST",
      path: `/api/batches/${f.batchId}/retry`,
      headers: { ...o, "Idempotency-Key": "fresh-retry-key" },
      status: 409,
      message: /Nothing in this batch has failed/,
    },
    {
      name: "the retry form with a key the page did not mint",
      method: "POST",
      path: `/batches/${f.batchId}`,
      headers: o,
      body: form({ intent: "retry", submission: "../../etc/passwd" }),
      status: 400,
      message: /The form was not understood/,
    },
    {
      name: "stranger retries through the page with a well-formed key",
      method: "POST",
      path: `/batches/${f.batchId}`,
      headers: s,
      body: form({ intent: "retry", submission: "a".repeat(32) }),
      status: 404,
    },
    { name: "stranger opens the batch page", method: "GET", path: `/batches/${f.batchId}`, headers: s, status: 404 },
    {
      name: "stranger retries through the page",
      method: "POST",
      path: `/batches/${f.batchId}`,
      headers: s,
      body: form({ intent: "retry" }),
      status: 404,
    },
    {
      name: "unknown intent on the batch page",
      method: "POST",
      path: `/batches/${f.batchId}`,
      headers: o,
      body: form({ intent: "delete" }),
      status: 400,
    },
    // The start page
    {
      name: "stranger's folder on the start page",
      method: "GET",
      path: `/batches/new?folder=${f.folderId}`,
      headers: s,
      status: 404,
    },
    {
      name: "stranger starts the owner's photo through the page",
      method: "POST",
      path: "/batches/new",
      headers: s,
      body: form({ designStyle: "modern", quoted: "1", [`pick:${f.photoId}`]: "1", [`room:${f.photoId}`]: "bedroom" }),
      status: 404,
    },
    {
      name: "a picked photo without a room",
      method: "POST",
      path: "/batches/new",
      headers: o,
      body: form({ designStyle: "modern", quoted: "1", [`pick:${f.photoId}`]: "1" }),
      status: 400,
      message: /room type/,
    },
    {
      name: "nothing picked",
      method: "POST",
      path: "/batches/new",
      headers: o,
      body: form({ designStyle: "modern", quoted: "0" }),
      status: 400,
    },
    {
      name: "a quoted total that is not a number",
      method: "POST",
      path: "/batches/new",
      headers: o,
      body: form({
        designStyle: "modern",
        quoted: "ten",
        [`pick:${f.photoId}`]: "1",
        [`room:${f.photoId}`]: "bedroom",
      }),
      status: 400,
    },
    {
      name: "a submission key that is not one the page mints",
      method: "POST",
      path: "/batches/new",
      headers: o,
      body: form({
        designStyle: "modern",
        quoted: "1",
        submission: "../../../x",
        [`pick:${f.photoId}`]: "1",
        [`room:${f.photoId}`]: "bedroom",
      }),
      status: 400,
      message: /not understood/,
    },
    // A team listing's batch (ADR 0310): a stranger gets the 404 of a made-up id; the member is refused by the empty
    // pool in its words, and a batch mixing the team's photo with a personal one is refused naming both.
    {
      name: "stranger's batch on another team's listing",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: batch([item(f.teamPhotoId)], { folderId: f.teamFolderId }),
      status: 404,
      message: /That folder was not found/,
    },
    {
      name: "stranger's batch of another team's listing photo, no folder named",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: batch([item(f.teamPhotoId)]),
      status: 404,
      message: /A photo of the batch was not found/,
    },
    {
      name: "stranger's start page of another team's listing",
      method: "GET",
      path: `/batches/new?folder=${f.teamFolderId}`,
      headers: s,
      status: 404,
    },
    {
      name: "stranger starts another team's listing photo through the page",
      method: "POST",
      path: "/batches/new",
      headers: s,
      body: form({
        folderId: f.teamFolderId,
        designStyle: "modern",
        quoted: "1",
        [`pick:${f.teamPhotoId}`]: "1",
        [`room:${f.teamPhotoId}`]: "bedroom",
      }),
      status: 404,
    },
    {
      name: "a member's batch of the team's listing against an empty pool",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.teamPhotoId)], { folderId: f.teamFolderId }),
      status: 402,
      message: /team's credit pool is used up/,
    },
    {
      name: "a batch mixing the team's listing photo and a personal one",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.teamPhotoId), item(f.photoId)]),
      status: 409,
      message: /paid from one place/,
    },
    // Who pays for the library's batch (ADR 0318): another's team is the 404 of a made-up one; photos not paid from
    // the choice are refused naming one; a malformed choice is 400.
    {
      name: "stranger's batch paid by another user's team",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: batch([item(f.teamPhotoId)], { paidBy: f.teamId }),
      status: 404,
      message: /That team was not found/,
    },
    {
      name: "stranger's library start page paid by another user's team",
      method: "GET",
      path: `/batches/new?paidBy=${f.teamId}`,
      headers: s,
      status: 404,
    },
    {
      name: "a member's team listing photo in a batch paid from their own credits",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.teamPhotoId)], { paidBy: "own" }),
      status: 409,
      message: /paid from your own credits, but/,
    },
    {
      name: "a member's own photo in a batch paid by their team",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.photoId)], { paidBy: f.teamId }),
      status: 409,
      message: /paid from the pool of/,
    },
    {
      name: "a malformed payer",
      method: "POST",
      path: "/api/batches",
      headers: o,
      body: batch([item(f.photoId)], { paidBy: "../x" }),
      status: 400,
    },
    {
      name: "a stranger's submission key with the owner's photo",
      method: "POST",
      path: "/api/batches",
      headers: s,
      body: batch([item(f.photoId)], { submission: "a".repeat(32) }),
      status: 404,
    },
    // A page's job request and its key (docs/decisions/0148-page-job-requests-sent-once.md)
    ...malformedKeys("a job request's", `/api/photos/${f.otherPhotoId}/jobs`, {
      kind: "stage",
      roomType: "bedroom",
      designStyle: "modern",
    }),
    ...(
      [
        ["another photo", f.otherPhotoId, "modern"],
        ["another style", f.photoId, "coastal"],
      ] as const
    ).map(([what, photoId, designStyle]) =>
      reusedKey(`the owner's key with ${what}`, `/api/photos/${photoId}/jobs`, OWNER_KEY, {
        kind: "stage",
        roomType: "livingroom",
        designStyle,
      }),
    ),
    strangerWithKey(
      "a stranger sends the owner's key with the owner's photo",
      `/api/photos/${f.photoId}/jobs`,
      OWNER_KEY,
      {
        kind: "stage",
        roomType: "livingroom",
        designStyle: "modern",
      },
    ),
    // Variations
    {
      name: "5 variations",
      method: "POST",
      path: `/api/photos/${f.photoId}/jobs`,
      headers: o,
      body: { kind: "stage", roomType: "bedroom", designStyle: "modern", variations: 5 },
      status: 400,
    },
    {
      name: "variations of a removal",
      method: "POST",
      path: `/api/photos/${f.photoId}/jobs`,
      headers: o,
      body: { kind: "removal", variations: 2 },
      status: 400,
    },
    {
      name: "more variations than credits",
      method: "POST",
      path: `/api/photos/${f.photoId}/jobs`,
      headers: o,
      body: { kind: "stage", roomType: "bedroom", designStyle: "modern", variations: 2 },
      status: 402,
    },
    {
      name: "a prompt with control characters",
      method: "POST",
      path: `/api/photos/${f.photoId}/jobs`,
      headers: o,
      body: { kind: "stage", roomType: "bedroom", designStyle: "modern", prompt: CONTROL_CHARS },
      status: 400,
    },
    // Staging from a version
    {
      name: "stranger's version as the source",
      method: "POST",
      path: `/api/photos/${f.otherPhotoId}/jobs`,
      headers: o,
      body: { kind: "stage", roomType: "bedroom", designStyle: "modern", sourceVersionId: "a".repeat(32) },
      status: 404,
    },
    {
      name: "another photo's version as the source",
      method: "POST",
      path: `/api/photos/${f.otherPhotoId}/jobs`,
      headers: o,
      body: { kind: "stage", roomType: "bedroom", designStyle: "modern", sourceVersionId: f.versionId },
      status: 404,
    },
    // Re-rolls
    {
      name: "stranger prices the owner's re-roll",
      method: "GET",
      path: `/api/jobs/${f.jobId}/reroll`,
      headers: s,
      status: 404,
    },
    {
      name: "stranger re-rolls the owner's job",
      method: "POST",
      path: `/api/jobs/${f.jobId}/reroll`,
      headers: s,
      body: {},
      status: 404,
    },
    {
      name: "re-roll of a removal",
      method: "POST",
      path: `/api/jobs/${f.removalJobId}/reroll`,
      headers: o,
      body: {},
      status: 400,
    },
    // A re-roll's key (docs/decisions/0148-page-job-requests-sent-once.md)
    ...malformedKeys("a re-roll's", `/api/jobs/${f.batchJobId}/reroll`, { acceptCharge: true }),
    reusedKey("the owner's re-roll key with another result", `/api/jobs/${f.batchJobId}/reroll`, OWNER_REROLL_KEY, {
      acceptCharge: true,
    }),
    strangerWithKey(
      "a stranger re-rolls the owner's job under the owner's re-roll key",
      `/api/jobs/${f.jobId}/reroll`,
      OWNER_REROLL_KEY,
      { acceptCharge: true },
    ),
    {
      name: "re-roll with a body that is not JSON",
      method: "POST",
      path: `/api/jobs/${f.jobId}/reroll`,
      headers: { ...o, "Content-Type": "application/json" },
      body: "{not json",
      status: 400,
    },
    // The chosen version
    {
      name: "stranger chooses the owner's version",
      method: "POST",
      path: `/api/photos/${f.photoId}/versions/${f.versionId}/choose`,
      headers: s,
      status: 404,
    },
    {
      name: "a version of another photo",
      method: "POST",
      path: `/api/photos/${f.otherPhotoId}/versions/${f.versionId}/choose`,
      headers: o,
      status: 404,
    },
    // The long poll of a job (docs/decisions/0146-job-long-poll.md): a stranger's real id answers at once with the
    // same 404 as an unknown one, and a wait that is not whole seconds from 0 to 20 is refused before any wait.
    {
      name: "stranger long-polls the owner's job",
      method: "GET",
      path: `/api/jobs/${f.jobId}?wait=20`,
      headers: s,
      status: 404,
    },
    {
      name: "long poll of an unknown job",
      method: "GET",
      path: "/api/jobs/nosuchjob?wait=20",
      headers: o,
      status: 404,
    },
    { name: "long poll signed out", method: "GET", path: `/api/jobs/${f.jobId}?wait=20`, status: 401 },
    ...["abc", "21", "-1", "1.5", "0x10", "", "%00", encodeURIComponent(SQL_META)].map(
      (wait): HostileCase => ({
        name: `long poll with wait=${wait}`,
        method: "GET",
        path: `/api/jobs/${f.jobId}?wait=${wait}`,
        headers: o,
        status: 400,
        message: /whole number of seconds from 0 to 20/,
      }),
    ),
    // The dashboard's folder view read with the session's statement (docs/decisions/0144): a stranger's real
    // folder id is the same 404 as an unknown one, for the page and for its data.
    {
      name: "stranger opens the owner's folder",
      method: "GET",
      path: `/dashboard?folder=${f.folderId}`,
      headers: s,
      status: 404,
    },
    {
      name: "stranger reads the owner's folder's data",
      method: "GET",
      path: `/dashboard.data?folder=${f.folderId}&_routes=routes/dashboard/dashboard`,
      headers: s,
      status: 404,
    },
  ];
}

describe("hostile input: listing routes", () => {
  it("refuses every case with a 4xx and changes nothing", async () => {
    for (const c of cases()) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
    expect(ran).toBeGreaterThan(30);
  }, 180_000);
});
