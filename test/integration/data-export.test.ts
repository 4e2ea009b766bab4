import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { dataExports } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { workerFetch } from "@test/support/worker";
import { signLink } from "@workers/lib/signed-links";
import { userObject } from "@workers/objects/user-object";
import { requestExport } from "@workers/services/mls/account-data";
import { eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { afterEach, describe, expect, it, vi } from "vitest";

// "Export my data" (docs/decisions/0112-account-deletion-and-export.md).

const allow = async () => ({ allowed: true, retryAfterSeconds: 0 });

/** The e-mails sent through the mail API while the test runs (there is no mail server in workerd). */
function recordMail(): { to: string[]; subject: string; text: string; html: string }[] {
  const sent: { to: string[]; subject: string; text: string; html: string }[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (!req.url.startsWith(`${env.MAIL_API_URL}/`)) return realFetch(input, init);
    sent.push(await req.json());
    return Response.json({ id: `m${sent.length}` });
  });
  return sent;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("data export", { timeout: 60_000 }, () => {
  it("is prepared by the user's Durable Object, stored as a ZIP of originals and JSON, served by a signed link for 24 hours", async () => {
    const mail = recordMail();
    const user = await makeUser({ credits: 2 });
    const photo = await makePhoto(user.id);
    const original = new Uint8Array(await (await env.PHOTOS.get(photo.originalKey))!.arrayBuffer());
    const res = await requestExport({ db, env, clock: Date.now, rateLimit: allow }, user.id);
    expect(res.ok).toBe(true);
    const id = res.ok ? res.id : "";
    // A second ask while one is prepared is refused.
    expect(await requestExport({ db, env, clock: Date.now, rateLimit: allow }, user.id)).toMatchObject({
      code: "conflict",
    });

    await runDurableObjectAlarm(userObject(env, user.id));
    const row = await db.select().from(dataExports).where(eq(dataExports.id, id)).get();
    expect(row?.status).toBe("ready");
    expect(row!.expiresAt! - row!.readyAt!).toBe(24 * 60 * 60 * 1000);

    const sig = await signLink(env, "export", id, row!.expiresAt!);
    // One e-mail, to the user, with the signed link in both parts.
    const link = `${env.APP_ORIGIN}/api/exports/${id}?exp=${row!.expiresAt}&sig=${sig}`;
    expect(mail.map((m) => [m.to, m.subject])).toEqual([[[user.email], "Your Stagewise data export is ready"]]);
    expect(mail[0]?.text).toContain(link);
    expect(mail[0]?.html.replace(/&#38;|&amp;/g, "&")).toContain(`href="${link}"`);
    const download = await workerFetch(`/api/exports/${id}?exp=${row!.expiresAt}&sig=${sig}`);
    expect(download.status).toBe(200);
    const files = unzipSync(new Uint8Array(await download.arrayBuffer()));
    const json = JSON.parse(new TextDecoder().decode(files["account.json"])) as {
      account: { email: string; passwordHash?: string };
      photos: unknown[];
      ledger: unknown[];
    };
    expect(json.account.email).toBe(user.email);
    expect(json.account.passwordHash).toBeUndefined();
    expect(json.photos).toHaveLength(1);
    expect(json.ledger.length).toBeGreaterThan(0);
    expect(files[`photos/${photo.id}/original.jpg`]).toEqual(original);

    // A tampered or expired link is refused.
    expect((await workerFetch(`/api/exports/${id}?exp=${row!.expiresAt! + 1}&sig=${sig}`)).status).toBe(410);
    const past = Date.now() - 1000;
    const old = await signLink(env, "export", id, past);
    expect((await workerFetch(`/api/exports/${id}?exp=${past}&sig=${old}`)).status).toBe(410);
  });
});
