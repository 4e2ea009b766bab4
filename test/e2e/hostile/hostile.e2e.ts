import { afterAll, beforeAll, describe, it } from "vitest";
import { seedPhotos } from "../../../bench/library-bytes.ts";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import {
  CONTROL_CHARS,
  expectRefusedWithoutChange,
  type HostileCase,
  HUGE_JSON,
  SQL_META,
  TRAVERSAL,
} from "./harness.ts";

// Every API endpoint and form action, attacked with malformed and hostile
// input. Each case must be refused with a 4xx and a clear message and change
// nothing stored. Cases are grouped per area; the count is printed at the end.

let alice: FixtureUser;
let bob: FixtureUser;
let admin: FixtureUser;
let expired: FixtureUser;
const cookie = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });
const FORGED = { Cookie: "sw_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
const MALFORMED_SESSION = { Cookie: "sw_session=%00%0d%0a'\";--" };
let ran = 0;
let alicePhoto: string | undefined;
let bobPhoto: string | undefined;

beforeAll(async () => {
  alice = await createUser({ credits: 3 });
  bob = await createUser({ credits: 3 });
  admin = await createUser({ role: "admin" });
  expired = await createUser({ role: "admin", expiredSession: true });
  [alicePhoto] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: alice.sessionToken! }, 1, "Alice");
  [bobPhoto] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: bob.sessionToken! }, 1, "Bob");
});

afterAll(() => {
  console.log(`hostile-input suite: ${ran} cases ran`);
});

function run(cases: () => HostileCase[]) {
  return async () => {
    for (const c of cases()) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
  };
}

describe("hostile input", () => {
  it(
    "cross-site writes are refused everywhere",
    run(() =>
      ["/logout", "/admin/users/x", "/api/admin/users/x/credits", "/api/dev/users", "/nowhere"].flatMap(
        (path): HostileCase[] => [
          {
            name: "foreign Origin",
            method: "POST",
            path,
            headers: { Origin: "https://evil.example", ...cookie(admin) },
            status: 403,
            message: "Cross-site",
          },
          {
            name: "Sec-Fetch-Site cross-site",
            method: "POST",
            path,
            headers: { "Sec-Fetch-Site": "cross-site", Origin: "null" },
            status: 403,
          },
        ],
      ),
    ),
  );

  it(
    "admin API: sessions missing, expired, forged, malformed, or not an admin",
    run(() =>
      [{}, cookie(alice), cookie(expired), FORGED, MALFORMED_SESSION].flatMap((headers): HostileCase[] => [
        { name: "list", method: "GET", path: "/api/admin/users", headers, status: 404, message: "Not found." },
        { name: "detail", method: "GET", path: `/api/admin/users/${bob.id}`, headers, status: 404 },
        {
          name: "grant",
          method: "POST",
          path: `/api/admin/users/${bob.id}/credits`,
          headers,
          body: { amount: 50, reason: "free money" },
          status: 404,
        },
        {
          name: "role",
          method: "POST",
          path: `/api/admin/users/${alice.id}/role`,
          headers,
          body: { role: "admin", reason: "promote me" },
          status: 404,
        },
        {
          name: "revoke",
          method: "POST",
          path: `/api/admin/users/${bob.id}/sessions/revoke`,
          headers,
          body: { reason: "x" },
          status: 404,
        },
      ]),
    ),
  );

  it(
    "admin API: malformed bodies from a real admin",
    run(() => {
      const h = cookie(admin);
      const credits = `/api/admin/users/${bob.id}/credits`;
      return [
        {
          name: "malformed JSON",
          method: "POST",
          path: credits,
          headers: { ...h, "Content-Type": "application/json" },
          body: '{"amount": 5,',
          status: 400,
          message: "JSON",
        },
        {
          name: "wrong types",
          method: "POST",
          path: credits,
          headers: h,
          body: { amount: "5", reason: 42 },
          status: 400,
        },
        {
          name: "fractional amount",
          method: "POST",
          path: credits,
          headers: h,
          body: { amount: 1.5, reason: "half" },
          status: 400,
        },
        {
          name: "zero amount",
          method: "POST",
          path: credits,
          headers: h,
          body: { amount: 0, reason: "nothing" },
          status: 400,
        },
        { name: "missing fields", method: "POST", path: credits, headers: h, body: {}, status: 400 },
        {
          name: "huge body",
          method: "POST",
          path: credits,
          headers: h,
          body: HUGE_JSON,
          status: 413,
          message: "larger than",
        },
        {
          name: "control characters",
          method: "POST",
          path: credits,
          headers: h,
          body: { amount: 1, reason: CONTROL_CHARS },
          status: 400,
          message: "not allowed",
        },
        {
          name: "below zero",
          method: "POST",
          path: credits,
          headers: h,
          body: { amount: -999, reason: "wipe out" },
          status: 409,
          message: "Insufficient credits",
        },
        {
          name: "unknown user",
          method: "POST",
          path: "/api/admin/users/nope/credits",
          headers: h,
          body: { amount: 1, reason: "ghost" },
          status: 404,
        },
        {
          name: "SQL in id",
          method: "POST",
          path: `/api/admin/users/${encodeURIComponent(SQL_META)}/credits`,
          headers: h,
          body: { amount: 1, reason: "inject" },
          status: 404,
        },
        {
          name: "traversal in id",
          method: "GET",
          path: `/api/admin/users/${encodeURIComponent(TRAVERSAL)}`,
          headers: h,
          status: 404,
        },
        {
          name: "bad sort column",
          method: "GET",
          path: "/api/admin/users?sort=password_hash",
          headers: h,
          status: 400,
        },
        {
          name: "bad role",
          method: "POST",
          path: `/api/admin/users/${bob.id}/role`,
          headers: h,
          body: { role: "root", reason: "why not" },
          status: 400,
        },
        {
          name: "same role",
          method: "POST",
          path: `/api/admin/users/${admin.id}/role`,
          headers: h,
          body: { role: "admin", reason: "again" },
          status: 409,
        },
      ];
    }),
  );

  it(
    "admin form actions",
    run(() => {
      const form = (fields: Record<string, string>) => {
        const f = new FormData();
        for (const [k, v] of Object.entries(fields)) f.set(k, v);
        return f;
      };
      const path = `/admin/users/${bob.id}`;
      return [
        {
          name: "non-admin",
          method: "POST",
          path,
          headers: cookie(alice),
          body: form({ intent: "credits", amount: "50", reason: "mine now" }),
          status: 404,
        },
        {
          name: "expired session",
          method: "POST",
          path,
          headers: cookie(expired),
          body: form({ intent: "credits", amount: "50", reason: "mine now" }),
          status: 404,
        },
        {
          name: "unknown intent",
          method: "POST",
          path,
          headers: cookie(admin),
          body: form({ intent: "delete", reason: "bye bye" }),
          status: 400,
        },
        {
          name: "amount not a number",
          method: "POST",
          path,
          headers: cookie(admin),
          body: form({ intent: "credits", amount: "abc", reason: "typo" }),
          status: 400,
        },
        {
          name: "missing reason",
          method: "POST",
          path,
          headers: cookie(admin),
          body: form({ intent: "credits", amount: "5" }),
          status: 400,
        },
        {
          name: "control characters",
          method: "POST",
          path,
          headers: cookie(admin),
          body: form({ intent: "revoke", reason: CONTROL_CHARS }),
          status: 400,
        },
        {
          name: "unknown user",
          method: "POST",
          path: "/admin/users/nope",
          headers: cookie(admin),
          body: form({ intent: "credits", amount: "5", reason: "ghost" }),
          status: 404,
        },
      ];
    }),
  );

  it(
    "dev fixtures refuse bad input",
    run(() => [
      {
        name: "fixture bad e-mail",
        method: "POST",
        path: "/api/dev/users",
        body: { email: "not-an-email" },
        status: 400,
      },
      {
        name: "fixture malformed",
        method: "POST",
        path: "/api/dev/users",
        headers: { "Content-Type": "application/json" },
        body: "[",
        status: 400,
      },
    ]),
  );

  it(
    "AI jobs: another user's photo, bad kinds, bad sky types, missing fields, malformed JSON, forged signed URLs",
    run(() => {
      const h = { ...cookie(alice), "Content-Type": "application/json" };
      const mine = `/api/photos/${alicePhoto}/jobs`;
      return [
        {
          name: "bob's photo",
          method: "POST",
          path: `/api/photos/${bobPhoto}/jobs`,
          headers: h,
          body: { kind: "stage", roomType: "Bedroom", designStyle: "Modern" },
          status: 404,
        },
        { name: "no session", method: "POST", path: mine, body: { kind: "removal" }, status: 401 },
        {
          name: "bad kind",
          method: "POST",
          path: mine,
          headers: h,
          body: { kind: "paint" },
          status: 400,
          message: "Please select all required options",
        },
        {
          name: "bad sky",
          method: "POST",
          path: mine,
          headers: h,
          body: { kind: "sky", skyType: SQL_META },
          status: 400,
          message: "Invalid sky type",
        },
        {
          name: "missing style",
          method: "POST",
          path: mine,
          headers: h,
          body: { kind: "stage", roomType: "Bedroom" },
          status: 400,
          message: "Please select all required options",
        },
        {
          name: "traversal room",
          method: "POST",
          path: mine,
          headers: h,
          body: { kind: "stage", roomType: TRAVERSAL, designStyle: "Modern" },
          status: 400,
        },
        { name: "malformed JSON", method: "POST", path: mine, headers: h, body: '{"kind": "stage",', status: 400 },
        { name: "bob's versions", method: "GET", path: `/api/photos/${bobPhoto}/versions`, headers: h, status: 404 },
        { name: "unknown job", method: "GET", path: "/api/jobs/nope", headers: h, status: 404 },
        {
          name: "forged signature",
          method: "GET",
          path: `/api/signed/photos/${bobPhoto}/original?exp=99999999999999&sig=${"0".repeat(64)}`,
          status: 403,
        },
        { name: "unsigned", method: "GET", path: `/api/signed/photos/${bobPhoto}/original`, status: 403 },
      ];
    }),
  );

  it("prints where it ran", () => {
    console.log(`hostile-input target: ${baseUrl()}`);
  });
});
