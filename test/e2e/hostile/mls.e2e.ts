import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeJpeg } from "../../fixtures/images.ts";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { expectRefusedWithoutChange, waitForQuietState } from "./harness.ts";
import { type MlsFixtures, mlsCases, type ReauthFixtures } from "./mls.cases.ts";

// Runs the MLS routes' hostile cases (mls.cases.ts) with the shared harness:
// each refused with a 4xx, nothing stored changed.

let owner: FixtureUser;
let stranger: FixtureUser;
let fixtures: MlsFixtures;
let ran = 0;

async function call(user: FixtureUser, method: string, path: string, body?: unknown): Promise<Response> {
  const isForm = body instanceof URLSearchParams;
  const isBytes = body instanceof Uint8Array;
  return fetch(`${baseUrl()}${path}`, {
    method,
    redirect: "manual",
    headers: {
      Cookie: `sw_session=${user.sessionToken}`,
      Origin: baseUrl(),
      ...(body !== undefined && !isForm && !isBytes ? { "Content-Type": "application/json" } : {}),
    },
    body: body === undefined ? undefined : isForm || isBytes ? (body as BodyInit) : JSON.stringify(body),
  });
}

async function stagedVersion(photoId: string): Promise<string> {
  const started = (await (
    await call(owner, "POST", `/api/photos/${photoId}/jobs`, {
      kind: "stage",
      roomType: "Bedroom",
      designStyle: "Modern",
    })
  ).json()) as { job: { id: string } };
  for (let i = 0; i < 120; i++) {
    const r = (await (await call(owner, "GET", `/api/jobs/${started.job.id}`)).json()) as {
      job: { status: string; versionId: string | null };
    };
    if (r.job.status === "succeeded") return r.job.versionId!;
    if (r.job.status === "failed") throw new Error("staging failed");
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error("staging did not finish");
}

async function uploadPhoto(): Promise<string> {
  const bytes = makeJpeg(320, 240, 80);
  const created = (await (
    await call(owner, "POST", "/api/uploads", { name: "Hostile.jpg", size: bytes.byteLength, type: "image/jpeg" })
  ).json()) as { id: string };
  await call(owner, "PUT", `/api/uploads/${created.id}/thumb`, makeJpeg(80, 60, 70));
  await call(owner, "PUT", `/api/uploads/${created.id}/chunks/0`, bytes);
  const done = (await (await call(owner, "POST", `/api/uploads/${created.id}/complete`)).json()) as {
    photo: { id: string };
  };
  return done.photo.id;
}

/** The `name=value` of a Set-Cookie header of this answer. */
function cookieOf(res: Response, name: string): string {
  const found = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!found) throw new Error(`no ${name} cookie (${res.status})`);
  return found.split(";")[0]!;
}

/** Answers the OAuth emulator's consent page as `email` and returns our callback path with its code and state. */
async function googleAnswers(authorizeUrl: string, email: string): Promise<string> {
  const url = new URL(authorizeUrl);
  url.searchParams.set("login_email", email);
  url.searchParams.set("login_email_verified", "1");
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get("Location")!);
  return back.pathname + back.search;
}

/** A Google-only account signed in through the emulator, one completed and one pending deletion confirmation. */
async function reauthFixtures(): Promise<{ googleOwner: Record<string, string>; reauth: ReauthFixtures }> {
  const email = `hostile-google-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const origin = { Origin: baseUrl() };
  const start = await fetch(`${baseUrl()}/auth/google`, {
    method: "POST",
    headers: { ...origin, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(),
    redirect: "manual",
  });
  const signInCookie = cookieOf(start, "sw_oauth");
  const signInBack = await googleAnswers(start.headers.get("Location")!, email);
  const signedIn = await fetch(`${baseUrl()}${signInBack}`, { headers: { Cookie: signInCookie }, redirect: "manual" });
  const googleOwner = { Cookie: cookieOf(signedIn, "sw_session") };

  const confirm = async () => {
    const res = await fetch(`${baseUrl()}/settings`, {
      method: "POST",
      headers: { ...origin, ...googleOwner, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "reauth-google" }),
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    return { cookie: cookieOf(res, "sw_oauth"), authorize: res.headers.get("Location")! };
  };
  const used = await confirm();
  const usedPath = await googleAnswers(used.authorize, email);
  const done = await fetch(`${baseUrl()}${usedPath}`, {
    headers: { Cookie: `${googleOwner.Cookie}; ${used.cookie}` },
    redirect: "manual",
  });
  expect(done.headers.get("Location")).toBe("/settings?confirm=delete");
  const pending = await confirm();
  const pendingPath = await googleAnswers(pending.authorize, `intruder-${email}`);
  return { googleOwner, reauth: { usedPath, usedCookie: used.cookie, pendingPath, pendingCookie: pending.cookie } };
}

beforeAll(async () => {
  owner = await createUser({ credits: 4, password: "hostile-owner-1" });
  stranger = await createUser({ credits: 1 });
  const photoId = await uploadPhoto();
  const versionId = await stagedVersion(photoId);
  const unlinkedVersionId = await stagedVersion(photoId);
  const withdrawnVersionId = await stagedVersion(photoId);
  // A link, revoked; then a live one (the "stranger revokes" case must find something to refuse). The photo is in
  // no listing yet, so nothing asks first.
  const made = (await (await call(owner, "POST", `/api/photos/${photoId}/versions/${versionId}/link`)).json()) as {
    url: string;
  };
  expect((await call(owner, "DELETE", `/api/photos/${photoId}/versions/${versionId}/link`)).status).toBe(200);
  const live = (await (await call(owner, "POST", `/api/photos/${photoId}/versions/${versionId}/link`)).json()) as {
    url: string;
  };
  const withdrawn = `/api/photos/${photoId}/versions/${withdrawnVersionId}/link`;
  expect((await call(owner, "POST", withdrawn)).status).toBe(200);
  expect((await call(owner, "DELETE", withdrawn)).status).toBe(200);
  // A folder made and deleted (a status change on it must be refused), then the listing the photo lives in.
  const folderIdOf = async () =>
    /folder=([a-z2-7]+)/.exec(await (await call(owner, "GET", "/dashboard")).text())?.[1] ?? "";
  await call(owner, "POST", "/dashboard", new URLSearchParams({ intent: "create-folder", name: "Gone listing" }));
  const deletedFolderId = await folderIdOf();
  await call(owner, "POST", "/dashboard", new URLSearchParams({ intent: "delete-folder", folderId: deletedFolderId }));
  await call(owner, "POST", "/dashboard", new URLSearchParams({ intent: "create-folder", name: "Hostile listing" }));
  const folderId = await folderIdOf();
  expect(folderId).not.toBe(deletedFolderId);
  await call(owner, "POST", "/dashboard", new URLSearchParams({ intent: "move", photoId, folderId }));
  // A team listing of the owner's team (ADR 0280) holding a staged photo: its pack, disclosure and labelled download
  // answer members only (ADR 0298), so the stranger must get the 404 of a made-up id.
  const madeTeam = await call(
    owner,
    "POST",
    "/teams",
    new URLSearchParams({ intent: "create-team", name: "Hostile team" }),
  );
  const teamId = /\/teams\/([a-z0-9]+)$/.exec(madeTeam.headers.get("Location") ?? "")?.[1] ?? "";
  expect(teamId).not.toBe("");
  const teamPhotoId = await uploadPhoto();
  const teamVersionId = await stagedVersion(teamPhotoId);
  await call(owner, "POST", "/dashboard", new URLSearchParams({ intent: "create-folder", name: "Team listing" }));
  const teamFolderId = await folderIdOf();
  await call(
    owner,
    "POST",
    "/dashboard",
    new URLSearchParams({ intent: "move", photoId: teamPhotoId, folderId: teamFolderId }),
  );
  const toTeam = await call(
    owner,
    "POST",
    "/dashboard",
    new URLSearchParams({ intent: "folder-to-team", folderId: teamFolderId, teamId }),
  );
  expect(toTeam.status).toBeLessThan(400);
  // The listing now names its team in the library's folder list (ADR 0280): it is the team's, not the owner's.
  expect(await (await call(owner, "GET", "/dashboard")).text()).toContain("Hostile team");
  fixtures = {
    teamFolderId,
    teamPhotoId,
    teamVersionId,
    owner: { Cookie: `sw_session=${owner.sessionToken}` },
    stranger: { Cookie: `sw_session=${stranger.sessionToken}` },
    photoId,
    versionId,
    unlinkedVersionId,
    folderId,
    revokedToken: new URL(made.url).pathname.split("/").pop() ?? "",
    liveToken: new URL(live.url).pathname.split("/").pop() ?? "",
    withdrawnVersionId,
    deletedFolderId,
    ...(await reauthFixtures()),
  };
  expect(folderId).not.toBe("");
  // Jobs' thumbnails land after their commits: settled before the cases compare digests.
  await waitForQuietState();
}, 120_000);

afterAll(() => {
  console.log(`hostile-input suite (MLS routes): ${ran} cases ran`);
});

describe("hostile input: MLS routes", () => {
  it("refuses every case with a 4xx and changes nothing", async () => {
    const byRoute = mlsCases(fixtures);
    for (const [route, cases] of Object.entries(byRoute)) {
      expect(cases.length, route).toBeGreaterThan(0);
      for (const c of cases) {
        await expectRefusedWithoutChange({ ...c, name: `${route}: ${c.name}` });
        ran++;
      }
    }
    expect(ran).toBeGreaterThan(40);
  }, 180_000);
});
