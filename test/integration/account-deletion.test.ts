import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import {
  contactMessages,
  creditLedger,
  originalLinks,
  photos,
  photoVersions,
  sessions,
  subscriptions,
  users,
} from "@db/schema";
import { accountDeps } from "@test/support/accounts";
import { db, makeUser } from "@test/support/factories";
import { makePhoto, makePhotoRows, photoRows } from "@test/support/photos";
import { allow, fakeStripe } from "@test/support/stripe";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/user-object";
import { signUp } from "@workers/services/accounts/password-auth";
import { userDetail } from "@workers/services/admin";
import { deleteAccount } from "@workers/services/mls/account-data";
import { publishOriginal } from "@workers/services/mls/links";
import { resolveLink } from "@workers/services/mls/original-page";
import { createSession } from "@workers/services/sessions";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// Account deletion (docs/decisions/0112-account-deletion-and-export.md).

const PASSWORD = "correct horse 42";

async function allR2Keys(userId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of [`photos/${userId}/`, `exports/${userId}/`]) {
    let cursor: string | undefined;
    do {
      const page = await env.PHOTOS.list({ prefix, cursor });
      keys.push(...page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
  return keys;
}

/** Rows anywhere in D1 whose text mentions `needle` (every column of every table). */
async function mentions(needle: string): Promise<string[]> {
  const { results: tables } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations'",
  ).all<{ name: string }>();
  const found: string[] = [];
  for (const { name } of tables) {
    const { results: cols } = await env.DB.prepare(`PRAGMA table_info("${name}")`).all<{ name: string }>();
    const where = cols.map((c) => `CAST("${c.name}" AS TEXT) LIKE ?1`).join(" OR ");
    const row = await env.DB.prepare(`SELECT count(*) AS n FROM "${name}" WHERE ${where}`)
      .bind(`%${needle}%`)
      .first<{ n: number }>();
    if ((row?.n ?? 0) > 0) found.push(name);
  }
  return found;
}

async function runPurge(userId: string): Promise<number> {
  const stub = userObject(env, userId);
  let runs = 0;
  while (runs < 200) {
    runs++;
    if (!(await runDurableObjectAlarm(stub))) break;
    if ((await allR2Keys(userId)).length === 0 && (await photoRows(userId)) === 0) {
      // One more pass lets it finish (folders, state) and stop scheduling itself.
      await runDurableObjectAlarm(stub);
      break;
    }
  }
  return runs;
}

async function seedAccount() {
  const user = await makeUser({ password: PASSWORD, credits: 5 });
  const name = `Jane Agent ${randomToken(4)}`;
  await db.update(users).set({ name }).where(eq(users.id, user.id));
  const photo = await makePhoto(user.id);
  await makePhoto(user.id);
  const versionId = randomToken();
  const key = `photos/${user.id}/${photo.id}/versions/${versionId}`;
  await env.PHOTOS.put(key, new Uint8Array([1, 2, 3]));
  await env.PHOTOS.put(`exports/${user.id}/old.zip`, new Uint8Array([4]));
  const now = Date.now();
  await db.insert(photoVersions).values({
    id: versionId,
    photoId: photo.id,
    userId: user.id,
    jobId: randomToken(),
    kind: "stage",
    params: {},
    key,
    thumbKey: key,
    contentType: "image/jpeg",
    bytes: 3,
    width: 40,
    height: 30,
    createdAt: now,
  });
  const published = await publishOriginal(db, user.id, photo.id, versionId, "again", now);
  if (!published.ok) throw new Error(published.error);
  const token = published.token;
  await createSession(db, user.id, "vitest");
  await createSession(db, user.id, "phone");
  await db.insert(subscriptions).values({
    id: `sub_${randomToken(6)}`,
    userId: user.id,
    customerId: "cus_1",
    planId: "popular",
    interval: "month",
    status: "active",
    createdAt: now,
    updatedAt: now,
  });
  await db.insert(contactMessages).values({
    id: randomToken(),
    name,
    email: user.email,
    message: "Hello",
    userId: user.id,
    createdAt: now,
  });
  return { user, token, name };
}

describe("account deletion", { timeout: 120_000 }, () => {
  it("refuses a wrong password and changes nothing", async () => {
    const { user } = await seedAccount();
    const { stripe, calls } = fakeStripe();
    const res = await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, user.id, {
      password: "nope",
    });
    expect(res).toMatchObject({ ok: false, code: "invalid" });
    expect(calls).toEqual([]);
    expect((await db.select().from(users).where(eq(users.id, user.id)).get())?.email).toBe(user.email);
    expect((await db.select().from(sessions).where(eq(sessions.userId, user.id)).all()).length).toBe(2);
  });

  it("cancels the subscription, ends sessions, erases personal data, purges R2, keeps the ledger anonymised; the address can sign up again", async () => {
    const { user, token, name } = await seedAccount();
    const ledgerBefore = await db.select().from(creditLedger).where(eq(creditLedger.userId, user.id)).all();
    expect(ledgerBefore.length).toBeGreaterThan(0);
    expect((await resolveLink(db, token, Date.now())).ok).toBe(true);
    const sub = await db.select().from(subscriptions).where(eq(subscriptions.userId, user.id)).get();

    const { stripe, calls } = fakeStripe();
    const res = await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, user.id, {
      password: PASSWORD,
    });
    expect(res).toEqual({ ok: true });
    expect(calls).toEqual([`DELETE /v1/subscriptions/${sub!.id}`]);
    // At once: sessions gone, the original page answers gone, personal data erased.
    expect(await db.select().from(sessions).where(eq(sessions.userId, user.id)).all()).toEqual([]);
    expect(await resolveLink(db, token, Date.now())).toMatchObject({ ok: false, code: "gone" });
    expect(await mentions(user.email)).toEqual([]);
    expect(await mentions(name)).toEqual([]);

    await runPurge(user.id);
    expect(await allR2Keys(user.id)).toEqual([]);
    expect(await photoRows(user.id)).toBe(0);
    expect(await db.select().from(originalLinks).where(eq(originalLinks.userId, user.id)).all()).toEqual([]);
    const row = await db.select().from(users).where(eq(users.id, user.id)).get();
    expect(row?.deletedAt).not.toBeNull();
    expect(row?.passwordHash).toBeNull();
    expect((await db.select().from(subscriptions).where(eq(subscriptions.userId, user.id)).get())?.status).toBe(
      "canceled",
    );
    // The admin console shows the account as deleted.
    expect((await userDetail(db, user.id))?.user.deletedAt).toBe(row?.deletedAt);
    // Accounting: the ledger stays, pointing at the anonymised row.
    const ledgerAfter = await db.select().from(creditLedger).where(eq(creditLedger.userId, user.id)).all();
    expect(ledgerAfter).toEqual(ledgerBefore);

    // The address is free: a new user, no credits carried over.
    const again = await signUp(accountDeps().deps, { email: user.email, password: PASSWORD, acceptTerms: "on" });
    expect(again.ok).toBe(true);
    const newId = again.ok ? again.userId : "";
    expect(newId).not.toBe(user.id);
    const fresh = await db.select().from(users).where(eq(users.id, newId)).get();
    expect(fresh?.credits).toBe(0);
    expect(await db.select().from(creditLedger).where(eq(creditLedger.userId, newId)).all()).toEqual([]);
  });

  it("purges 1,000 photos in batches run by the Durable Object's alarm", async () => {
    const user = await makeUser({ password: PASSWORD });
    const rows = await makePhotoRows(user.id, 1000, (i) => 1_000_000 + i);
    // Two objects per photo: 2,000 keys, more than one alarm run deletes.
    for (let i = 0; i < rows.length; i += 50) {
      await Promise.all(
        rows.slice(i, i + 50).flatMap((p) => [env.PHOTOS.put(p.originalKey, "o"), env.PHOTOS.put(p.thumbKey, "t")]),
      );
    }
    const { stripe } = fakeStripe();
    expect(
      await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, user.id, { password: PASSWORD }),
    ).toEqual({
      ok: true,
    });
    const runs = await runPurge(user.id);
    expect(runs).toBeGreaterThanOrEqual(4);
    expect(await allR2Keys(user.id)).toEqual([]);
    const left = await db.select({ n: sql<number>`count(*)` }).from(photos).where(eq(photos.userId, user.id)).get();
    expect(left?.n).toBe(0);
  });
});
