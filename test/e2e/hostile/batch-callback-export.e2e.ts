import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import { expectRefusedWithoutChange, form, type HostileCase, send, waitForQuietState } from "./harness.ts";

// Hostile input at the product's own limits (issue 45): a batch of exactly the largest size and one past it, a
// callback address at its longest and one past it, a callback name that resolves to a private network, and an
// export link followed after a password reset and after an admin's sign-out everywhere. Each must be refused with
// a 4xx and a clear message, never a 5xx, and change nothing stored. The largest batch actually staged end to end
// is test/e2e/batch-limit.e2e.ts. docs/decisions/0205, 0206, 0207.

let alice: FixtureUser;
let admin: FixtureUser;
let alicePhoto = "";
let ran = 0;
const cookie = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });
const MAX_BATCH = 100;
const MAX_CALLBACK_URL = 2048;

beforeAll(async () => {
  alice = await createUser({ credits: 3, apiKey: true });
  admin = await createUser({ role: "admin" });
  [alicePhoto] = (await seedPhotos({ baseUrl: baseUrl(), sessionToken: alice.sessionToken! }, 1, "Alice")) as [string];
  await waitForQuietState();
}, 120_000);

afterAll(() => {
  console.log(`hostile-input suite (batch, callback, export limits): ${ran} cases ran`);
});

function run(cases: () => HostileCase[]) {
  return async () => {
    for (const c of cases()) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
  };
}

/** `n` ids of photos that do not exist, in the shape of real ones (32 base32 letters). */
const madeUpIds = (n: number) => Array.from({ length: n }, (_, i) => `zz${String(i).padStart(30, "a")}`);

/** Steers the DNS emulator: `name` answers `addresses` to every lookup. */
async function resolveAs(name: string, addresses: string[]) {
  const res = await fetch(`http://127.0.0.1:${inject("ports").dns}/_emulator/names`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name, answers: [addresses] }),
  });
  expect(res.ok).toBe(true);
}

/** The newest e-mail to `to` with `subject`, waited for (it goes out after the answer). */
async function mailTo(to: string, subject: string, after = 0): Promise<string> {
  const api = `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(to)}`;
  for (let i = 0; i < 300; i++) {
    const mails = (await (await fetch(api)).json()) as { subject: string; text: string }[];
    const matching = mails.filter((m) => m.subject === subject);
    if (matching.length > after) return matching.at(-1)!.text;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no "${subject}" e-mail to ${to}`);
}

/** A mailed export link of the user (its path and query), downloaded once so it is known to work. */
async function exportLink(user: FixtureUser, earlier: number): Promise<string> {
  const asked = await fetch(`${baseUrl()}/api/account/export`, {
    method: "POST",
    headers: { ...cookie(user), Origin: baseUrl(), "Content-Type": "application/json" },
    body: "{}",
  });
  expect(asked.status).toBe(202);
  const text = await mailTo(user.email, "Your Stagewise data export is ready", earlier);
  const link = new URL(/https?:\/\/\S+\/api\/exports\/\S+/.exec(text)?.[0] ?? "");
  const first = await fetch(`${baseUrl()}${link.pathname}${link.search}`);
  expect(first.status).toBe(200);
  await first.arrayBuffer();
  return `${link.pathname}${link.search}`;
}

describe("hostile input at the product's limits", () => {
  it(
    "a batch of exactly the largest size reaches its real check; one past it is refused by the limit",
    run((): HostileCase[] => {
      const h = { ...cookie(alice), "Content-Type": "application/json" };
      const items = (ids: string[]) => ids.map((photoId) => ({ photoId, roomType: "bedroom" }));
      const batchForm = (ids: string[]) => {
        const fields: Record<string, string> = { designStyle: "modern", quoted: String(ids.length) };
        for (const id of ids) {
          fields[`pick:${id}`] = "1";
          fields[`room:${id}`] = "bedroom";
        }
        return form(fields);
      };
      return [
        {
          name: "API: 100 photos, none of them the user's",
          method: "POST",
          path: "/api/batches",
          headers: h,
          body: { designStyle: "modern", items: items(madeUpIds(MAX_BATCH)) },
          status: 404,
          message: "A photo of the batch was not found.",
        },
        {
          name: "API: 99 made-up photos and the user's own",
          method: "POST",
          path: "/api/batches",
          headers: h,
          body: { designStyle: "modern", items: items([...madeUpIds(MAX_BATCH - 1), alicePhoto]) },
          status: 404,
          message: "A photo of the batch was not found.",
        },
        {
          name: "API: 100 photos, one twice",
          method: "POST",
          path: "/api/batches",
          headers: h,
          body: { designStyle: "modern", items: items([...madeUpIds(MAX_BATCH - 1), alicePhoto, alicePhoto]) },
          status: 400,
        },
        {
          name: "API: 101 photos",
          method: "POST",
          path: "/api/batches",
          headers: h,
          body: { designStyle: "modern", items: items(madeUpIds(MAX_BATCH + 1)) },
          status: 400,
          message: "A batch takes at most 100 photos.",
        },
        {
          name: "form: 100 photos, none of them the user's",
          method: "POST",
          path: "/batches/new",
          headers: cookie(alice),
          body: batchForm(madeUpIds(MAX_BATCH)),
          status: 404,
          message: "A photo of the batch was not found.",
        },
        {
          name: "form: 101 photos",
          method: "POST",
          path: "/batches/new",
          headers: cookie(alice),
          body: batchForm(madeUpIds(MAX_BATCH + 1)),
          status: 400,
          message: "A batch takes at most 100 photos.",
        },
      ];
    }),
  );

  it("a callback name that resolves to a private network is refused before anything is reserved", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const names: [string, string[], RegExp][] = [
      [`inside-${tag}.hostile.test`, ["10.0.0.1"], /private or local network/],
      [`metadata-${tag}.hostile.test`, ["127.0.0.1", "169.254.169.254"], /private or local network/],
      [`ula-${tag}.hostile.test`, ["fd00::1"], /private or local network/],
      [`nowhere-${tag}.hostile.test`, [], /could not be resolved/],
    ];
    for (const [name, addresses] of names) await resolveAs(name, addresses);
    // The longest callback address allowed, whose name resolves privately: it reaches the lookup and is refused there.
    const longName = `long-${tag}.hostile.test`;
    await resolveAs(longName, ["192.168.1.20"]);
    const longest = `https://${longName}/${"a".repeat(MAX_CALLBACK_URL - `https://${longName}/`.length)}`;
    expect(longest).toHaveLength(MAX_CALLBACK_URL);
    const h = { Authorization: `Bearer ${alice.apiKey}`, "Content-Type": "application/json" };
    const job = (callbackUrl: string, name: string, message?: RegExp): HostileCase => ({
      name,
      method: "POST",
      path: `/api/v1/photos/${alicePhoto}/jobs`,
      headers: { ...h, "Idempotency-Key": `hostile-${crypto.randomUUID()}` },
      body: { kind: "stage", roomType: "Bedroom", designStyle: "Modern", callbackUrl },
      status: 400,
      message,
    });
    await run(() => [
      ...names.map(([name, addresses, message]) =>
        job(`https://${name}/hook`, `callback resolving to ${addresses.join(", ") || "nothing"}`, message),
      ),
      job(`http://${names[0]![0]}/hook`, "the same over http", /private or local network/),
      job(longest, `a callback address of ${MAX_CALLBACK_URL} characters`, /private or local network/),
      job(`${longest}b`, `a callback address of ${MAX_CALLBACK_URL + 1} characters`),
    ])();
    // Each name was looked up when the job was asked for: the refusal came from its answer.
    const asked = (await (
      await fetch(`http://127.0.0.1:${inject("ports").dns}/_emulator/queries?name=${names[0]![0]}`)
    ).json()) as { type: string }[];
    expect(asked.filter((q) => q.type === "A").length).toBeGreaterThanOrEqual(2);
  });

  it("an export link mailed before a password reset, or an admin's sign-out everywhere, answers 410", async () => {
    const password = "the first password 1";
    const carol = await createUser({ credits: 1, password });
    await seedPhotos({ baseUrl: baseUrl(), sessionToken: carol.sessionToken! }, 1, "Carol");
    const before = await exportLink(carol, 0);
    // The password reset, as the person does it: the form, the mailed link, the new password.
    const forgot = await fetch(`${baseUrl()}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { Origin: baseUrl(), "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "forgot", email: carol.email }),
    });
    expect(forgot.status).toBeLessThan(400);
    const resetMail = await mailTo(carol.email, "Reset your Stagewise password");
    const token = /[?&]token=([^\s&]+)/.exec(resetMail)?.[1] ?? "";
    expect(token).not.toBe("");
    const reset = await send({
      name: "reset",
      method: "POST",
      path: "/reset-password",
      body: form({ token: decodeURIComponent(token), password: "a brand new password 2" }),
    });
    expect(reset.status).toBe(302);

    const dave = await createUser({ credits: 1 });
    await seedPhotos({ baseUrl: baseUrl(), sessionToken: dave.sessionToken! }, 1, "Dave");
    const daves = await exportLink(dave, 0);
    const signedOut = await send({
      name: "sign out everywhere",
      method: "POST",
      path: `/admin/users/${dave.id}`,
      headers: cookie(admin),
      body: form({ intent: "revoke", reason: "Account taken over" }),
    });
    expect(signedOut.status).toBeLessThan(400);
    await waitForQuietState();
    await run(() => [
      { name: "export link after a password reset", method: "GET", path: before, status: 410, message: /expired/ },
      { name: "export link after sign-out everywhere", method: "GET", path: daves, status: 410, message: /expired/ },
    ])();
  }, 120_000);
});
