import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl } from "../browser.ts";
import { createFixtureUser, type FixtureUser } from "../fixtures.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import { stateDigest, waitForQuietState } from "./harness.ts";

// The hostile-input suite generated from the route table (docs/decisions/0060-hostile-input-suite.md):
// GET /api/dev/routes lists every Hono route and every React Router page, with its action and loader, read
// from the apps themselves. Each route gets the attacks that fit it: no, forged and malformed sessions,
// another user's real ids in every id parameter, traversal and SQL in path parameters, a cross-site origin,
// wrong media types, malformed and oversized (chunked) bodies, methods it does not take, control characters
// in form fields. Every answer must be a 4xx or a redirect to one of our own pages (a sign-in page, for a
// visitor without a session), never a 5xx, and D1 and R2 must be exactly as they were. A route whose parameters the suite cannot fill
// fails the suite: a new route needs a line in ID_SOURCES before it can ship.

interface RouteEntry {
  app: "api" | "page";
  method: string;
  path: string;
  id?: string;
  action?: boolean;
  loader?: boolean;
}

interface Case {
  route: string;
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: BodyInit;
  /** The request must be refused: a 4xx (a GET may also redirect to our sign-in page). */
  refused: boolean;
  /** A chunked body: the request needs duplex. */
  stream?: boolean;
}

let alice: FixtureUser;
let bob: FixtureUser;
let routes: RouteEntry[] = [];
const ids: Record<string, string> = {};
let ran = 0;

/** Routes that are development tools (they exist only with dev tools on) and change state by design. */
const DEV_ONLY = /^\/api\/dev(\/|$)/;
/** Page actions that take no fields: signing out (a refused one just goes home) and leaving for Google. */
const NO_FIELDS = new Set(["/logout", "/auth/google"]);

/**
 * Which real value of Bob's fills each path parameter, by parameter name and route. Alice asks with her own
 * session, so each of these must answer exactly as for an id that does not exist.
 */
const ID_SOURCES: { param: RegExp; route?: RegExp; value: () => string }[] = [
  { param: /^(photoId)$/, value: () => ids.photo! },
  { param: /^id$/, route: /\/photos\/:id/, value: () => ids.photo! },
  { param: /^id$/, route: /\/uploads\/:id/, value: () => ids.upload! },
  { param: /^id$/, route: /\/jobs\/:id/, value: () => ids.job! },
  { param: /^jobId$/, value: () => ids.job! },
  { param: /^id$/, route: /\/users\/:id/, value: () => bob.id },
  { param: /^versionId$/, value: () => ids.version! },
  { param: /^id$/, route: /\/folders\/:id/, value: () => ids.folder! },
  { param: /^id$/, route: /\/batches\/:id/, value: () => ids.batch! },
  { param: /^variant$/, value: () => "original" },
  // A removal mask is named by its content's SHA-256 and read only through a signed address (ADR 0195).
  { param: /^maskId$/, value: () => "0".repeat(64) },
  { param: /^which$/, value: () => "original" },
  // Exports are prepared in the background and mailed; a made-up id stands in for another user's.
  { param: /^id$/, route: /\/exports\/:id/, value: () => "0123456789abcdefghijklmnopqrstuv" },
  { param: /^index$/, value: () => "0" },
  // Bob's team (made through the /teams form): Alice is not a member, so it must answer as a made-up id would.
  { param: /^teamId$/, value: () => ids.team! },
  { param: /^(token)$/, value: () => "0123456789abcdefghijklmnopqrstuv" },
  // The provider smoke check's sample, by its content's SHA-256: without a signature nobody may read it.
  { param: /^name$/, route: /\/provider-sample\/:name/, value: () => `${"0".repeat(64)}.jpg` },
];

const PARAM = /:([A-Za-z0-9_]+)(\{[^}]*\})?\??|\{([A-Za-z0-9_]+)\}/g;

function paramsOf(path: string): string[] {
  return [...path.matchAll(PARAM)].map((m) => m[1] ?? m[3]!);
}

function fill(path: string, value: (param: string) => string): string {
  return path.replace(PARAM, (_all, a: string | undefined, _re, b: string | undefined) =>
    encodeURIComponent(value((a ?? b)!)),
  );
}

function strangerValue(route: string, param: string): string | null {
  const source = ID_SOURCES.find((s) => s.param.test(param) && (!s.route || s.route.test(route)));
  return source ? source.value() : null;
}

const session = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });
const FORGED = { Cookie: "sw_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
const MALFORMED = { Cookie: "sw_session=%00%0d%0a'\";--" };

function chunkedBody(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const n = Math.min(64 * 1024, bytes - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x7b));
    },
  });
}

function casesFor(r: RouteEntry): Case[] {
  const key = `${r.app} ${r.method} ${r.path}`;
  const cases: Case[] = [];
  const own = fill(r.path, (p) => strangerValue(r.path, p) ?? "x").replace(/\*$/, "no-such-page");
  const add = (c: Omit<Case, "route">) => cases.push({ route: key, ...c });
  const write = r.method !== "GET" && r.method !== "HEAD";
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

  // Sessions that are no session at all.
  for (const [name, headers] of [
    ["forged session", FORGED],
    ["malformed session", MALFORMED],
  ] as const) {
    add({ name, method: r.method, path: own, headers, refused: write, body: write ? "{}" : undefined });
  }
  // Another user's real ids, asked for with Alice's session.
  if (paramsOf(r.path).length > 0) {
    for (const method of write ? [r.method] : ["GET"]) {
      add({
        name: "another user's ids",
        method,
        path: own,
        headers: { ...session(alice), ...(write ? { "Content-Type": "application/json" } : {}) },
        body: write
          ? JSON.stringify({ kind: "stage", roomType: "Bedroom", designStyle: "Modern", reason: "x" })
          : undefined,
        refused: true,
      });
    }
    for (const [name, value] of [
      ["traversal in a path parameter", "../../../../etc/passwd"],
      ["SQL in a path parameter", "' OR 1=1; DROP TABLE users; --"],
      ["control characters in a path parameter", "a\u0000b\u001b[31m"],
    ] as const) {
      const path = fill(r.path, (p) => (p === "variant" ? "original" : value));
      add({ name, method: r.method, path, headers: session(alice), refused: true, body: write ? "{}" : undefined });
    }
  }
  if (write) {
    add({
      name: "cross-site Origin",
      method: r.method,
      path: own,
      headers: { ...session(alice), Origin: "https://evil.example" },
      refused: true,
    });
    add({
      name: "Sec-Fetch-Site cross-site",
      method: r.method,
      path: own,
      headers: { ...session(alice), "Sec-Fetch-Site": "cross-site" },
      refused: true,
    });
    const types: [string, string, string][] =
      r.app === "page"
        ? [
            ["text/plain", "text/plain", "intent=x"],
            ["JSON to a form", "application/json", '{"intent":"x"}'],
            ["multipart without a boundary", "multipart/form-data", "--x\r\n"],
            ["broken multipart", "multipart/form-data; boundary=zz", "garbage"],
          ]
        : [
            ["text/plain", "text/plain", "{}"],
            ["a form to JSON", "application/x-www-form-urlencoded", "a=b"],
            ["malformed JSON", "application/json", "{oops"],
            ["JSON that is not an object", "application/json", "[1,2,3]"],
            ["invalid UTF-8", "application/json", "\u00ff"],
          ];
    for (const [name, type, body] of types) {
      add({
        name: `wrong or malformed body: ${name}`,
        method: r.method,
        path: own,
        headers: { ...session(alice), "Content-Type": type },
        body,
        refused: true,
      });
    }
    add({
      name: "oversized chunked body",
      method: r.method,
      path: own,
      headers: { ...session(alice), "Content-Type": r.app === "page" ? FORM["Content-Type"] : "application/json" },
      body: chunkedBody(4 * 1024 * 1024),
      stream: true,
      refused: true,
    });
    add({
      name: "oversized declared body",
      method: r.method,
      path: own,
      headers: { ...session(alice), "Content-Type": "application/json" },
      body: `{"x":"${"y".repeat(300 * 1024)}"}`,
      refused: true,
    });
  }
  if (r.app === "page" && r.action) {
    for (const method of ["PATCH", "PUT", "DELETE"]) {
      add({
        name: `${method} to a page`,
        method,
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form({ intent: "x" }),
        refused: true,
      });
    }
    if (!NO_FIELDS.has(r.path))
      add({
        name: "control characters and SQL in every likely field",
        method: "POST",
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form({
          intent: "\u0000",
          name: "bad\u0000name\u202e",
          email: "' OR 1=1; --",
          password: "\u0007",
          reason: "\u001b[31m",
          amount: "1e309",
          planId: "../../etc",
          folderId: "' OR 1=1",
          photoId: "../../x",
          keyId: "' OR 1=1",
          limit: "1e309",
          token: "\u0000",
          redirectTo: "/\t/evil.example",
        }),
        refused: true,
      });
  }
  if (r.app === "page" && r.path === "/teams/:teamId") {
    // The team API key forms (ADR 0295) on Bob's team, sent by Alice: a stranger's team answers as a made-up id
    // would, whatever the key; nothing is made or revoked.
    const asks: Record<string, string>[] = [
      { intent: "create-key", name: "Alice's key", limit: "" },
      { intent: "revoke-key", keyId: ids.teamKey! },
      // The key's callback secret (ADR 0355).
      { intent: "rotate-key-secret", keyId: ids.teamKey! },
      { intent: "end-key-old-secret", keyId: ids.teamKey! },
      // The broker's record's retention (ADR 0285).
      { intent: "retention", days: "400" },
      // A stranger handing the team to themselves, or to its owner (ADR 0311).
      { intent: "transfer", memberId: alice.id, confirm: "on" },
      { intent: "transfer", memberId: bob.id, confirm: "on" },
      // The team plan's billing portal (ADR 0314).
      { intent: "billing" },
    ];
    for (const fields of asks) {
      add({
        name: `another user's team: ${fields.intent}${fields.memberId === alice.id ? " to themselves" : ""}`,
        method: "POST",
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form(fields),
        refused: true,
      });
    }
  }
  if (r.app === "page" && r.path === "/settings") {
    // The API key forms (ADR 0182, 0350, 0353) with a key that is not Alice's (Bob's team key): answered as a made-up
    // id would; no key is revoked, no secret replaced or stopped.
    for (const intent of ["revoke", "rotate-callback-secret", "end-previous-callback-secret"]) {
      add({
        name: `another user's API key: ${intent}`,
        method: "POST",
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form({ intent, keyId: ids.teamKey! }),
        refused: true,
      });
    }
  }
  if (
    r.app === "page" &&
    (r.path === "/teams/:teamId/record" ||
      r.path === "/teams/:teamId/record.csv" ||
      r.path === "/teams/:teamId/spend.csv")
  ) {
    // The broker's record (ADR 0285) and the spend export (ADR 0312) of Bob's team, read by Alice with a range (and
    // a listing): a team she is not in answers as a made-up id would.
    add({
      name: "another user's team: the broker's record for a range",
      method: "GET",
      path: `${own}?from=2026-01-01&to=2026-12-31&folder=${ids.folder!}`,
      headers: session(alice),
      refused: true,
    });
  }
  if (r.app === "page" && r.path === "/photos/:id") {
    // The photo view's result intents (ADR 0337) on Bob's photo and version, sent by Alice: "I checked the walls and
    // windows" and "This result changed the room" answer as a made-up id would; nothing is confirmed or returned.
    for (const intent of ["confirm-structure", "changed-room"]) {
      add({
        name: `another user's result: ${intent}`,
        method: "POST",
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form({ intent, versionId: ids.version! }),
        refused: true,
      });
    }
  }
  if (r.app === "page" && r.path === "/dashboard") {
    // The team listing forms (ADR 0280), sent by Alice with Bob's team and Bob's folder: a team she is not in answers
    // as a made-up id would; no folder is made or moved. The grid's form (ADR 0332) with Bob's photo: nothing moves.
    const asks: Record<string, string>[] = [
      { intent: "create-folder", name: "Alice in Bob's team", teamId: ids.team! },
      { intent: "folder-to-team", folderId: ids.folder!, teamId: ids.team! },
      { trash: ids.photo! },
      { "delete-forever": ids.photo! },
      { move: ids.photo!, [`folder-${ids.photo!}`]: "" },
      // Deleting Bob's folder (ADR 0338 refuses a team listing to its own maker; a stranger's is a made-up id).
      { intent: "delete-folder", folderId: ids.folder! },
    ];
    for (const fields of asks) {
      add({
        name: `another user's team or photo: ${fields.intent ?? Object.keys(fields)[0]}`,
        method: "POST",
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form(fields),
        refused: true,
      });
    }
  }
  if (r.app === "page" && !r.action) {
    // A page that takes no form (every public page, the shared original /o/:token): 405, the same title as any
    // refused request, nothing changed.
    for (const method of ["POST", "PUT", "DELETE"]) {
      add({
        name: `${method} to a page that takes none`,
        method,
        path: own,
        headers: { ...session(alice), ...FORM },
        body: form({ intent: "x" }),
        refused: true,
      });
    }
  }
  if (r.app === "page" && r.loader) {
    add({ name: "page without a session", method: "GET", path: own, refused: false });
    add({
      name: "page data without a session",
      method: "GET",
      path: `${own === "/" ? "/_root" : own}.data`,
      refused: false,
    });
  }
  if (r.app === "api" && !write) {
    add({ name: "unknown method", method: "PATCH", path: own, headers: session(alice), refused: true });
    if (paramsOf(r.path).length > 0) {
      // The owner's own ids with conditions nobody can parse (R2 throws on such an entity-tag list): ignored or
      // refused, never a 5xx.
      add({
        name: "malformed conditional headers, by the owner",
        method: "GET",
        path: own,
        headers: { ...session(bob), "If-None-Match": '"unclosed, abc', "If-Match": "abc", "If-Modified-Since": "soon" },
        refused: false,
      });
    }
  }
  return cases;
}

async function send(c: Case): Promise<{ status: number; location: string | null; text: string }> {
  const init: RequestInit & { duplex?: "half" } = {
    method: c.method,
    headers: { Origin: baseUrl(), ...c.headers },
    body: c.method === "GET" || c.method === "HEAD" ? undefined : c.body,
    redirect: "manual",
  };
  if (c.stream) init.duplex = "half";
  try {
    const res = await fetch(`${baseUrl()}${c.path}`, init);
    return { status: res.status, location: res.headers.get("Location"), text: (await res.text()).slice(0, 300) };
  } catch (err) {
    // The server may close a connection it has refused mid-stream (an oversized body): that is a refusal too.
    if (c.stream) return { status: 413, location: null, text: String(err) };
    throw err;
  }
}

beforeAll(async () => {
  const res = await fetch(`${baseUrl()}/api/dev/routes`);
  expect(res.status).toBe(200);
  routes = ((await res.json()) as RouteEntry[]).filter((r) => !DEV_ONLY.test(r.path));
  alice = await createFixtureUser(baseUrl(), { credits: 3 });
  bob = await createFixtureUser(baseUrl(), { credits: 3 });
  const [photo] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: bob.sessionToken! }, 1, "Bob's room");
  ids.photo = photo!;
  const bobHeaders = { ...session(bob), Origin: baseUrl(), "Content-Type": "application/json" };
  const job = await fetch(`${baseUrl()}/api/photos/${photo}/jobs`, {
    method: "POST",
    headers: bobHeaders,
    body: JSON.stringify({ kind: "removal" }),
  });
  ids.job = ((await job.json()) as { job: { id: string } }).job.id;
  for (let i = 0; i < 200; i++) {
    const j = (await (await fetch(`${baseUrl()}/api/jobs/${ids.job}`, { headers: session(bob) })).json()) as {
      job: { status: string; versionId: string | null };
    };
    if (j.job.status === "succeeded") {
      ids.version = j.job.versionId!;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Bob's folder: made through the dashboard's form, its id read off the page's folder links.
  await fetch(`${baseUrl()}/dashboard`, {
    method: "POST",
    headers: { ...session(bob), Origin: baseUrl(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ intent: "create-folder", name: "Bob's listing" }).toString(),
  });
  const madeTeam = await fetch(`${baseUrl()}/teams`, {
    method: "POST",
    headers: { ...session(bob), Origin: baseUrl(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ intent: "create-team", name: "Bob's brokerage" }).toString(),
    redirect: "manual",
  });
  ids.team = /\/teams\/([a-z0-9]+)$/.exec(madeTeam.headers.get("Location") ?? "")?.[1] ?? "";
  expect(ids.team).not.toBe("");
  // A key of Bob's team, made through the team page's form; its id read off the page's revoke form.
  await fetch(`${baseUrl()}/teams/${ids.team}`, {
    method: "POST",
    headers: { ...session(bob), Origin: baseUrl(), "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ intent: "create-key", name: "Bob's feed", limit: "" }).toString(),
  });
  const teamPage = await (await fetch(`${baseUrl()}/teams/${ids.team}`, { headers: session(bob) })).text();
  ids.teamKey = /name="keyId" value="([a-z0-9]+)"/.exec(teamPage)?.[1] ?? "";
  expect(ids.teamKey).not.toBe("");
  const page = await (await fetch(`${baseUrl()}/dashboard`, { headers: session(bob) })).text();
  ids.folder = /[?&]folder=([a-z0-9]+)/.exec(page)?.[1] ?? "";
  const upload = await fetch(`${baseUrl()}/api/uploads`, {
    method: "POST",
    headers: bobHeaders,
    body: JSON.stringify({ name: "open.jpg", size: 1000, type: "image/jpeg" }),
  });
  ids.upload = ((await upload.json()) as { id: string }).id;
  const batch = await fetch(`${baseUrl()}/api/batches`, {
    method: "POST",
    headers: bobHeaders,
    body: JSON.stringify({ designStyle: "modern", items: [{ photoId: photo, roomType: "livingroom" }] }),
  });
  ids.batch = ((await batch.json()) as { batch: { id: string } }).batch.id;
  // Settled before the cases start, so nothing it writes moves the digests under them.
  for (let i = 0; i < 200; i++) {
    const view = (await (await fetch(`${baseUrl()}/api/batches/${ids.batch}`, { headers: session(bob) })).json()) as {
      batch: { open: boolean };
    };
    if (!view.batch.open) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(ids.version && ids.upload && ids.folder && ids.batch, "Bob's fixtures").toBeTruthy();
  await waitForQuietState();
}, 120_000);

afterAll(() => {
  console.log(`hostile-input suite (generated from ${routes.length} routes): ${ran} cases ran`);
});

describe("hostile input, generated from the route table", () => {
  it("knows how to fill every path parameter of every route", () => {
    const unknown = routes.flatMap((r) =>
      paramsOf(r.path)
        .filter((p) => strangerValue(r.path, p) === null)
        .map((p) => `${r.method} ${r.path}: no hostile id source for :${p} (add one to ID_SOURCES)`),
    );
    expect(unknown).toEqual([]);
    expect(routes.filter((r) => r.app === "api").length).toBeGreaterThan(20);
    expect(routes.filter((r) => r.app === "page").length).toBeGreaterThan(15);
  });

  it("every route refuses every attack that fits it, never with a 5xx, and nothing stored changes", {
    timeout: 900_000,
  }, async () => {
    const cases = routes.flatMap(casesFor);
    expect(cases.length).toBeGreaterThanOrEqual(500);
    const failures: string[] = [];
    let before = await stateDigest();
    for (const c of cases) {
      const { status, location, text } = await send(c);
      const after = await stateDigest();
      const label = `${c.route} — ${c.name}: ${c.method} ${c.path.slice(0, 80)} answered ${status} ${text.slice(0, 120)}`;
      if (status >= 500) failures.push(`5xx: ${label}`);
      else if (status >= 300 && status < 400) {
        const to = new URL(location ?? "", baseUrl());
        if (to.origin !== new URL(baseUrl()).origin) failures.push(`redirect off our origin (${location}): ${label}`);
      } else if (c.refused && (status < 400 || status >= 500)) failures.push(`not refused: ${label}`);
      if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`changed stored state: ${label}`);
      before = after;
      ran++;
    }
    expect(failures).toEqual([]);
  });
});
