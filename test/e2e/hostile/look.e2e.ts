import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import {
  CONTROL_CHARS,
  expectRefusedWithoutChange,
  form,
  type HostileCase,
  SQL_META,
  TRAVERSAL,
  waitForQuietState,
} from "./harness.ts";

// Hostile input for a listing's look (docs/decisions/0190-one-look-for-a-listing.md): "Use this look for the
// listing" (POST /api/photos/:id/versions/:versionId/look), the dashboard's look forms (look-strength,
// clear-look) and the look fields of a batch (JSON and the new-batch form), by the owner with bad input and by a
// stranger with the owner's ids or their own. Each is refused with a 4xx and changes nothing stored.

let owner: FixtureUser;
let stranger: FixtureUser;
let ran = 0;
const f = {
  folderId: "",
  bareFolderId: "",
  photoId: "",
  otherPhotoId: "",
  versionId: "",
  removalVersionId: "",
  loosePhotoId: "",
  looseVersionId: "",
  strangerPhotoId: "",
  strangerVersionId: "",
  strangerFolderId: "",
};

const headers = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });

async function call(u: FixtureUser, method: string, path: string, body?: unknown) {
  const isForm = body instanceof URLSearchParams;
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    redirect: "manual",
    headers: {
      ...headers(u),
      Origin: baseUrl(),
      ...(body !== undefined && !isForm ? { "Content-Type": "application/json" } : {}),
    },
    body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith("{") ? JSON.parse(text) : {} };
}

async function versionOf(u: FixtureUser, photoId: string, kind: "stage" | "removal"): Promise<string> {
  const body = kind === "stage" ? { kind, roomType: "bedroom", designStyle: "modern" } : { kind };
  const started = await call(u, "POST", `/api/photos/${photoId}/jobs`, body);
  expect(started.status).toBe(202);
  for (let i = 0; i < 120; i++) {
    const r = await call(u, "GET", `/api/jobs/${started.body.job.id}`);
    if (r.body.job.status === "succeeded") return r.body.job.versionId as string;
    if (r.body.job.status === "failed") throw new Error("job failed");
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error("job did not settle");
}

/** A folder of the user's made with the dashboard's own form, holding `photoIds`; its id. */
async function folderOf(u: FixtureUser, name: string, photoIds: string[]): Promise<string> {
  const before = await (await fetch(`${baseUrl()}/dashboard`, { headers: headers(u) })).text();
  const known = new Set([...before.matchAll(/folder=([a-z2-7]+)/g)].map((m) => m[1]));
  await call(u, "POST", "/dashboard", new URLSearchParams({ intent: "create-folder", name }));
  const html = await (await fetch(`${baseUrl()}/dashboard`, { headers: headers(u) })).text();
  const id = [...html.matchAll(/folder=([a-z2-7]+)/g)].map((m) => m[1]!).find((x) => !known.has(x)) ?? "";
  for (const photoId of photoIds) {
    await call(u, "POST", "/dashboard", new URLSearchParams({ intent: "move", photoId, folderId: id }));
  }
  return id;
}

beforeAll(async () => {
  await fetch(`http://127.0.0.1:${inject("ports").provider}/_emulator/mode`, {
    method: "POST",
    body: JSON.stringify({ mode: "ok" }),
  });
  owner = await createUser({ credits: 6 });
  stranger = await createUser({ credits: 2 });
  const seeded = await seedPhotos({ baseUrl: baseUrl(), sessionToken: owner.sessionToken! }, 3, "Den");
  [f.photoId, f.otherPhotoId, f.loosePhotoId] = seeded as [string, string, string];
  f.folderId = await folderOf(owner, "Look listing", [f.photoId, f.otherPhotoId]);
  f.bareFolderId = await folderOf(owner, "No look yet", []);
  f.versionId = await versionOf(owner, f.photoId, "stage");
  f.removalVersionId = await versionOf(owner, f.otherPhotoId, "removal");
  f.looseVersionId = await versionOf(owner, f.loosePhotoId, "stage");
  const set = await call(owner, "POST", `/api/photos/${f.photoId}/versions/${f.versionId}/look`, {});
  expect(set.status).toBe(200);
  const [theirs] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: stranger.sessionToken! }, 1, "Den");
  f.strangerPhotoId = theirs!;
  f.strangerFolderId = await folderOf(stranger, "Their listing", [theirs!]);
  f.strangerVersionId = await versionOf(stranger, theirs!, "stage");
  expect(Object.values(f).every(Boolean)).toBe(true);
  await waitForQuietState();
}, 180_000);

afterAll(() => {
  console.log(`hostile-input suite (listing look): ${ran} cases ran`);
});

/** The new-batch form's look fields, each wrong. */
const BATCH_FORM_EXTRAS: Record<string, string>[] = [
  { look: "maybe" },
  { lookStrength: "0.6" },
  { lookStrength: SQL_META },
  { lookStrength: "123456789" },
];

function cases(): HostileCase[] {
  const o = headers(owner);
  const s = headers(stranger);
  const lookPath = (photoId: string, versionId: string) => `/api/photos/${photoId}/versions/${versionId}/look`;
  const own = lookPath(f.photoId, f.versionId);
  const dashboard = (who: Record<string, string>, fields: Record<string, string>, name: string, status: number) => ({
    name,
    method: "POST",
    path: `/dashboard?folder=${f.folderId}`,
    headers: who,
    body: form(fields),
    status,
  });
  const item = { photoId: f.otherPhotoId, roomType: "bedroom" };
  const batch = (extra: Record<string, unknown>) => ({ designStyle: "modern", items: [item], ...extra });
  const batchForm = (extra: Record<string, string>) =>
    form({
      folderId: f.folderId,
      designStyle: "modern",
      quoted: "1",
      [`pick:${f.otherPhotoId}`]: "1",
      [`room:${f.otherPhotoId}`]: "bedroom",
      ...extra,
    });
  return [
    // "Use this look for the listing"
    { name: "stranger uses the owner's version", method: "POST", path: own, headers: s, body: {}, status: 404 },
    {
      name: "the stranger's version under the owner's photo",
      method: "POST",
      path: lookPath(f.photoId, f.strangerVersionId),
      headers: o,
      body: {},
      status: 404,
    },
    {
      name: "the stranger's photo and version by the owner",
      method: "POST",
      path: lookPath(f.strangerPhotoId, f.strangerVersionId),
      headers: o,
      body: {},
      status: 404,
    },
    {
      name: "the owner's version into the stranger's folder (their photo's id)",
      method: "POST",
      path: lookPath(f.strangerPhotoId, f.versionId),
      headers: o,
      body: {},
      status: 404,
    },
    {
      name: "a version of another photo",
      method: "POST",
      path: lookPath(f.otherPhotoId, f.versionId),
      headers: o,
      body: {},
      status: 404,
    },
    {
      name: "a removal is not a look",
      method: "POST",
      path: lookPath(f.otherPhotoId, f.removalVersionId),
      headers: o,
      body: {},
      status: 400,
      message: /Only a staged version/,
    },
    {
      name: "a photo outside any folder",
      method: "POST",
      path: lookPath(f.loosePhotoId, f.looseVersionId),
      headers: o,
      body: {},
      status: 400,
      message: /in a folder first/,
    },
    ...[0.6, 0, -0.5, 2, 1e308, "0.7", SQL_META, null, [0.7], { value: 0.7 }].map(
      (strength): HostileCase => ({
        name: `strength ${JSON.stringify(strength)}`,
        method: "POST",
        path: own,
        headers: o,
        body: { strength },
        status: 400,
      }),
    ),
    ...[TRAVERSAL, SQL_META, CONTROL_CHARS].map(
      (bad): HostileCase => ({
        name: `a version id of ${JSON.stringify(bad).slice(0, 20)}`,
        method: "POST",
        path: lookPath(f.photoId, encodeURIComponent(bad)),
        headers: o,
        body: {},
      }),
    ),
    { name: "no session", method: "POST", path: own, body: {}, status: 401 },
    { name: "a form, not JSON", method: "POST", path: own, headers: o, body: form({ strength: "0.7" }), status: 415 },
    {
      name: "a body that is not JSON",
      method: "POST",
      path: own,
      headers: { ...o, "Content-Type": "application/json" },
      body: "{not json",
      status: 400,
    },
    {
      name: "a JSON array",
      method: "POST",
      path: own,
      headers: { ...o, "Content-Type": "application/json" },
      body: "[0.7]",
      status: 400,
    },
    { name: "cross-site", method: "POST", path: own, headers: { ...o, Origin: "https://evil.example" }, body: {} },
    // The dashboard's look forms
    dashboard(s, { intent: "clear-look", folderId: f.folderId }, "stranger clears the owner's look", 404),
    dashboard(
      s,
      { intent: "look-strength", folderId: f.folderId, strength: "0.5" },
      "stranger changes the strength",
      404,
    ),
    dashboard(o, { intent: "look-strength", folderId: f.folderId, strength: "0.6" }, "a strength off the steps", 400),
    dashboard(o, { intent: "look-strength", folderId: f.folderId, strength: SQL_META }, "SQL as a strength", 400),
    dashboard(o, { intent: "look-strength", folderId: f.folderId, strength: "1e0" }, "1e0 as a strength", 400),
    dashboard(o, { intent: "look-strength", folderId: f.folderId }, "no strength", 400),
    dashboard(
      o,
      { intent: "look-strength", folderId: f.bareFolderId, strength: "0.5" },
      "a strength for a folder without a look",
      409,
    ),
    dashboard(
      o,
      { intent: "clear-look", folderId: f.strangerFolderId },
      "the owner clears the stranger's folder's look",
      404,
    ),
    dashboard(o, { intent: "clear-look", folderId: TRAVERSAL }, "a traversal as the folder", 400),
    dashboard(o, { intent: "clear-look", folderId: CONTROL_CHARS }, "control characters as the folder", 400),
    dashboard(o, { intent: "clear-look" }, "no folder", 400),
    // A batch's look fields, as JSON and as the new-batch form
    ...[{ look: "maybe" }, { look: "" }, { lookStrength: 0.6 }, { lookStrength: "0.7" }, { lookStrength: null }].map(
      (extra): HostileCase => ({
        name: `a batch with ${JSON.stringify(extra)}`,
        method: "POST",
        path: "/api/batches",
        headers: o,
        body: batch(extra),
        status: 400,
      }),
    ),
    ...BATCH_FORM_EXTRAS.map(
      (extra): HostileCase => ({
        name: `the new-batch form with ${JSON.stringify(extra)}`,
        method: "POST",
        path: `/batches/new?folder=${f.folderId}`,
        headers: o,
        body: batchForm(extra),
        status: 400,
      }),
    ),
  ];
}

describe("hostile input: a listing's look", () => {
  it("refuses every case with a 4xx and changes nothing", async () => {
    for (const c of cases()) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
    expect(ran).toBeGreaterThan(30);
  }, 180_000);
});
