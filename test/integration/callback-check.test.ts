import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { apiCallbacks, creditLedger, creditReservations, jobs } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, makeUser } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { makeTeam, teamFolder } from "@test/support/teams";
import { userObject } from "@workers/objects/user-object";
import { createApiKey } from "@workers/services/api-keys";
import { jobCallback } from "@workers/services/jobs/callback-url";
import { type JobCallback, requestJob } from "@workers/services/jobs/start";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { MASK_MESSAGES } from "~/shared/masks";
import { fail } from "~/shared/result";

// A callback address is resolved and checked before the job's credit is reserved (issue 45, hole 8; ADR 0207). A
// name that resolved to a private network used to be accepted (202, a credit reserved) and refused only at delivery.
//
// The workerd pool resolves no names (urlPolicy without DNS_RESOLVER_URL, so other tests can stub fetch by name):
// here the service gets the Worker's env with DNS_RESOLVER_URL set, and the resolver's DNS-over-HTTPS answers are
// stubbed at the isolate's fetch, as the e2e stack's DNS emulator answers them.

const DOH = "http://dns.test/dns-query";
const RESULT = makeJpeg(64, 48, 80);
/** The A records each name resolves to (no AAAA records); a name not listed resolves to nothing. */
const zone: Record<string, string[]> = {
  "hooks.private-inside.example": ["10.0.0.7"],
  "hooks.metadata.example": ["203.0.113.9", "169.254.169.254"],
  "hooks.public.example": ["93.184.216.34"],
};
let asked: string[] = [];

beforeEach(() => {
  asked = [];
  const provider = stubProvider((req) => {
    const url = new URL(req.url);
    if (req.url.startsWith(DOH)) {
      const name = url.searchParams.get("name") ?? "";
      asked.push(`${url.searchParams.get("type")} ${name}`);
      const a = url.searchParams.get("type") === "A" ? (zone[name] ?? []) : [];
      return Response.json({ Status: 0, Answer: a.map((data) => ({ name, type: 1, TTL: 60, data })) });
    }
    // Every receiver answers (without this change a refused name's job ran and its callback was delivered by name).
    if (url.hostname.startsWith("hooks.")) return new Response("ok");
    return null;
  });
  provider.answer = () => [RESULT];
});

const STAGE = { kind: "stage" as const, roomType: "Bedroom", designStyle: "Scandinavian" };
/** The service as the public API's route calls it, with names resolved as in production. */
const resolving = { db, env: { ...env, DNS_RESOLVER_URL: DOH } };

async function apiUser(credits: number) {
  const user = await makeUser({ credits });
  const photo = await makePhoto(user.id);
  const made = await createApiKey({ db, env, clock: () => Date.now() }, user.id, { name: "hooks", scopes: ["stage"] });
  if (!made.ok) throw new Error(made.error);
  const ask = (callbackUrl: string) =>
    requestJob(resolving, user.id, photo.id, STAGE, {
      api: { callback: jobCallback(resolving.env, callbackUrl, made.key.id) },
    });
  return { user, ask };
}

async function written(userId: string) {
  return {
    jobs: await db.select().from(jobs).where(eq(jobs.userId, userId)).all(),
    reservations: await db.select().from(creditReservations).where(eq(creditReservations.userId, userId)).all(),
    ledger: (await db.select().from(creditLedger).where(eq(creditLedger.userId, userId)).all()).map((l) => l.kind),
    callbacks: await db.select().from(apiCallbacks).where(eq(apiCallbacks.userId, userId)).all(),
  };
}

describe("a callback address is resolved before the credit is reserved", () => {
  it("refuses a name that resolves to a private address with a 400 on callbackUrl; balance and rows unchanged", async () => {
    const { user, ask } = await apiUser(2);
    const before = await written(user.id);
    for (const name of ["hooks.private-inside.example", "hooks.metadata.example"]) {
      const res = await ask(`https://${name}/stagewise`);
      expect(res).toEqual({
        ok: false,
        code: "invalid",
        error: "The address points to a private or local network.",
        fieldErrors: { callbackUrl: "The address points to a private or local network." },
      });
      expect(asked).toContain(`A ${name}`);
    }
    expect(await userObject(env, user.id).balance(user.id)).toBe(2);
    expect(await written(user.id)).toEqual(before);
    expect(before).toEqual({ jobs: [], reservations: [], ledger: ["grant"], callbacks: [] });
  });

  it("refuses a name that resolves to nothing, and an empty address, the same way", async () => {
    const { user, ask } = await apiUser(2);
    expect(await ask("https://hooks.nowhere.example/x")).toMatchObject({
      ok: false,
      code: "invalid",
      error: "The address's host name could not be resolved.",
    });
    expect(await ask("")).toMatchObject({
      ok: false,
      code: "invalid",
      fieldErrors: { callbackUrl: expect.any(String) },
    });
    expect(await userObject(env, user.id).balance(user.id)).toBe(2);
    expect((await written(user.id)).reservations).toEqual([]);
  });

  it("accepts a name that resolves publicly: the credit reserved and the callback recorded with the job", async () => {
    const { user, ask } = await apiUser(2);
    const res = await ask("https://hooks.public.example/stagewise");
    expect(res.ok, JSON.stringify(res)).toBe(true);
    if (!res.ok) return;
    expect(res.credits).toBe(1);
    expect(asked).toContain("A hooks.public.example");
    const rows = await written(user.id);
    expect(rows.reservations).toHaveLength(1);
    expect(rows.callbacks.map((c) => c.url)).toEqual(["https://hooks.public.example/stagewise"]);
    // Let the job end and its callback be delivered here (to the stub above), so nothing of it runs after the test.
    const stub = userObject(env, user.id);
    for (let i = 0; i < 200; i++) {
      const row = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, res.job.id)).get();
      if (row?.status === "delivered") break;
      if (i % 10 === 9) await runDurableObjectAlarm(stub);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await written(user.id)).callbacks.map((c) => c.status)).toEqual(["delivered"]);
  });
});

// The callback's check runs at requestJob's last step before the reservation (ADR 0336), where ADR 0207 put it: a
// request with another fault hears that one first, and the check is never run for it.
describe("the callback's check runs after every other check of the request", () => {
  const REFUSED = "The address points to a private or local network.";
  function refusing() {
    const checked: string[] = [];
    const callback: JobCallback = {
      url: "https://hooks.private-inside.example/x",
      apiKeyId: "key-1",
      check: async (url) => {
        checked.push(url);
        return fail("invalid", REFUSED, { fieldErrors: { callbackUrl: REFUSED } });
      },
    };
    return { callback, checked };
  }

  it("a stranger's photo, a mask on a staging and a missing source version are heard first", async () => {
    const [owner, stranger] = [await makeUser({ credits: 2 }), await makeUser({ credits: 2 })];
    const photo = await makePhoto(owner.id);
    const { callback, checked } = refusing();
    const api = { api: { callback } };
    expect(await requestJob(resolving, stranger.id, photo.id, STAGE, api)).toMatchObject({ code: "not_found" });
    expect(await requestJob(resolving, owner.id, photo.id, { ...STAGE, maskId: "a".repeat(64) }, api)).toMatchObject({
      code: "invalid",
      error: MASK_MESSAGES.onlyRemoval,
    });
    expect(
      await requestJob(resolving, owner.id, photo.id, { kind: "removal", sourceVersionId: "no-such-version" }, api),
    ).toMatchObject({ code: "not_found" });
    expect(checked).toEqual([]);
    expect(await requestJob(resolving, owner.id, photo.id, STAGE, api)).toMatchObject({
      code: "invalid",
      fieldErrors: { callbackUrl: REFUSED },
    });
    expect(checked).toEqual([callback.url]);
    expect((await written(owner.id)).reservations).toEqual([]);
  });

  it("a team key's request: its variations are heard first, then its callback, and the pool is never asked", async () => {
    const member = await makeUser({ credits: 0 });
    const teamId = await makeTeam(member.id, { credits: 3 });
    const photo = await makePhoto(member.id, { folderId: await teamFolder(teamId, member.id) });
    const { callback, checked } = refusing();
    const teamKey = { teamKey: { teamId, payer: "key:key-1", callback } };
    expect(await requestJob(resolving, member.id, photo.id, { ...STAGE, variations: 9 }, teamKey)).toMatchObject({
      code: "invalid",
    });
    expect(checked).toEqual([]);
    expect(await requestJob(resolving, member.id, photo.id, STAGE, teamKey)).toMatchObject({
      fieldErrors: { callbackUrl: REFUSED },
    });
    expect(checked).toEqual([callback.url]);
    expect((await written(member.id)).jobs).toEqual([]);
  });
});
