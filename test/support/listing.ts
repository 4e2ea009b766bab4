import { env } from "cloudflare:workers";
import { batches, creditLedger, creditReservations, folders, jobs, users } from "@db/schema";
import { encodeBase64 } from "@oslojs/encoding";
import { makeJpeg } from "@test/fixtures/images";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { db, signedIn } from "./factories";
import { makePhoto } from "./photos";
import { workerFetch } from "./worker";

// Helpers for the listing tests (issue 15): a user on a plan with photos, the
// API as the page calls it, and what the user's rows say afterwards.

export async function onPlan(plan: string | null, credits: number) {
  const user = await signedIn({ credits });
  await db.update(users).set({ plan }).where(eq(users.id, user.id));
  return user;
}

/** Each photo's original, by its bytes: staging uploads them (docs/decisions/0143-staging-uploads-the-source.md). */
const photoByOriginal = new Map<string, string>();
let originals = 0;

/** `n` photos, each original with bytes of its own, so a provider call tells which photo it started from. */
export async function photosOf(userId: string, n: number, folderId: string | null = null) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const photo = await makePhoto(userId, { name: `Room ${i + 1}.jpg`, folderId });
    const bytes = makeJpeg(40, 30, 70, 24, ++originals);
    await env.PHOTOS.put(photo.originalKey, bytes, { httpMetadata: { contentType: "image/jpeg" } });
    photoByOriginal.set(encodeBase64(bytes), photo.id);
    out.push(photo);
  }
  return out;
}

/** The photo (made by photosOf) whose original a provider call received; "" for none. */
export function photoIdOfInput(input: Uint8Array | null): string {
  return input ? (photoByOriginal.get(encodeBase64(input)) ?? "") : "";
}

export async function folderOf(userId: string): Promise<string> {
  const id = randomToken();
  await db.insert(folders).values({ id, userId, name: "12 Oak Lane", createdAt: Date.now() });
  return id;
}

export async function api(
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await workerFetch(path, {
    method,
    headers: {
      Cookie: cookie,
      Origin: "http://localhost",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: test answers are read field by field
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as any };
}

export interface BatchItem {
  photoId: string;
  jobId: string;
  status: string;
  error: string | null;
  attempts: number;
  thumbUrl: string | null;
}

export async function settleBatch(cookie: string, batchId: string) {
  for (let i = 0; i < 800; i++) {
    const r = await api(cookie, "GET", `/api/batches/${batchId}`);
    expect(r.status).toBe(200);
    if (!r.body.batch.open) return r.body.batch as { items: BatchItem[]; counts: Record<string, number> };
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error("the batch did not settle");
}

export async function settleJob(cookie: string, jobId: string) {
  for (let i = 0; i < 800; i++) {
    const r = await api(cookie, "GET", `/api/jobs/${jobId}`);
    expect(r.status).toBe(200);
    if (r.body.job.status === "succeeded" || r.body.job.status === "failed")
      return r.body.job as { id: string; status: string; versionId: string | null; error: string | null };
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error("the job did not settle");
}

export function balance(userId: string): Promise<number> {
  return userObject(env, userId).balance(userId);
}

/** Every job, batch, reservation and ledger row of the user: for "nothing was written". */
export async function rowsOf(userId: string) {
  return {
    jobs: await db.select().from(jobs).where(eq(jobs.userId, userId)).all(),
    batches: await db.select().from(batches).where(eq(batches.userId, userId)).all(),
    reservations: await db.select().from(creditReservations).where(eq(creditReservations.userId, userId)).all(),
    ledger: await db.select().from(creditLedger).where(eq(creditLedger.userId, userId)).all(),
  };
}

/** Each reservation settled, committed exactly for the succeeded jobs and refunded for the failed ones. */
export async function expectSettled(userId: string) {
  const { jobs: all, reservations } = await rowsOf(userId);
  const byKey = new Map(reservations.map((r) => [r.key, r]));
  for (const j of all) {
    const r = byKey.get(j.id);
    expect(r, `reservation of job ${j.id}`).toBeDefined();
    expect(r!.amount).toBe(j.cost);
    expect(r!.status, `job ${j.id} ${j.status}`).toBe(j.status === "succeeded" ? "committed" : "refunded");
  }
  expect(reservations.length).toBe(all.length);
}
