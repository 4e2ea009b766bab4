import { jobs, photos, teams, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { deletePrefix, userPrefix } from "@workers/lib/photo-storage";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { PLANS } from "~/shared/catalog";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { createApiKey } from "./api-keys";
import { hashPassword } from "./password";
import type { Deps } from "./request-deps";
import { createSession, SESSION_TTL_MS } from "./sessions";
import { teamRunnerId } from "./teams/keys";

// Test and development fixtures: the one way a test user is made (the workerd
// tests' factory and POST /api/dev/users for the e2e tests and the bench) and
// removed again (DELETE /api/dev/users/:id after each e2e test), plus the
// digest of the stored state the hostile suite compares. Reached only from
// test code and from /api/dev, which exists only with dev tools on.

export const fixtureUserInput = z.object({
  email: z.email().optional(),
  name: z.string().min(1).max(100).optional(),
  password: z.string().min(8).max(128).optional(),
  verified: z.boolean().default(true),
  role: z.enum(["user", "admin"]).default("user"),
  credits: z.number().int().min(0).max(10_000).default(0),
  /** The plan the user is on (its display name, as the payment webhook records it): what the plan unlocks. */
  plan: z
    .string()
    .refine((p) => PLANS.some((plan) => plan.name === p), "Unknown plan.")
    .optional(),
  session: z.boolean().default(true),
  /** Make the session one that expired a day ago (to test expired sessions). */
  expiredSession: z.boolean().default(false),
  /** Also make an API key with both scopes, returned once as `apiKey` (the hostile suite's public API cases). */
  apiKey: z.boolean().default(false),
});

export type FixtureUserInput = z.input<typeof fixtureUserInput>;

export interface FixtureUserOptions {
  /** The start of a made-up address (`<prefix>-<random>@example.test`). */
  emailPrefix?: string;
  /** PBKDF2 iterations for the password; tests that sign in many users pass fewer. */
  hashIterations?: number;
  /** The session's user agent. */
  agent?: string;
  /** Mark a verified user's trial credits as already settled, so they have exactly the credits asked for. */
  trialSettled?: boolean;
}

/** A user with an e-mail, optionally a password, credits granted through their Durable Object, and a session. */
export async function createFixtureUser(
  deps: Pick<Deps, "db" | "env">,
  raw: FixtureUserInput = {},
  opts: FixtureUserOptions = {},
): Promise<{ id: string; email: string; sessionToken: string | null; apiKey?: string }> {
  const input = fixtureUserInput.parse(raw);
  const { db, env } = deps;
  const id = randomToken();
  const now = Date.now();
  const email = (input.email ?? `${opts.emailPrefix ?? "e2e"}-${id.slice(0, 10)}@example.test`).toLowerCase();
  await db.insert(users).values({
    id,
    email,
    name: input.name ?? email.split("@")[0] ?? "user",
    passwordHash: input.password ? await hashPassword(input.password, opts.hashIterations) : null,
    emailVerifiedAt: input.verified ? now : null,
    signupCreditsGranted: opts.trialSettled && input.verified ? 1 : 0,
    role: input.role,
    plan: input.plan ?? null,
    createdAt: now,
    updatedAt: now,
  });
  if (input.credits > 0) {
    await userObject(env, id).grant(id, {
      amount: input.credits,
      source: "admin",
      reason: "Test fixture credits",
      idempotencyKey: `fixture:${id}`,
    });
  }
  const sessionNow = input.expiredSession ? now - SESSION_TTL_MS - 24 * 60 * 60 * 1000 : now;
  const session = input.session ? await createSession(db, id, opts.agent ?? "e2e fixture", sessionNow) : null;
  if (input.apiKey) {
    const made = await createApiKey({ db, env, clock: Date.now }, id, { name: "fixture", scopes: ["stage", "read"] });
    if (made.ok) return { id, email, sessionToken: session?.token ?? null, apiKey: made.token };
  }
  return { id, email, sessionToken: session?.token ?? null };
}

/**
 * Removes a fixture user: their photos' bytes first (a failure half-way leaves the row to retry), then the user
 * row, whose foreign keys take sessions, photos, folders, jobs, versions, credits and keys with it.
 */
export async function removeFixtureUser(
  deps: Pick<Deps, "db" | "bucket">,
  userId: string,
): Promise<Result<{ objects: number }>> {
  const user = await deps.db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, userId) });
  if (!user) return fail("not_found", "No such user.");
  // The runner accounts of the teams this user owns (ADR 0295) go too: nobody else removes them, and their team
  // key jobs would stay among the finished jobs every later test's landing figures count.
  const owned = await deps.db.select({ id: teams.id }).from(teams).where(eq(teams.ownerId, userId)).all();
  let objects = 0;
  for (const id of [...owned.map((t) => teamRunnerId(t.id)), userId]) {
    const removed = await removeAccount(deps, id);
    if (!removed.ok) return removed;
    objects += removed.objects;
  }
  return ok({ objects });
}

/**
 * One account's bytes, then its row. deletePrefix tries a refused delete again (local R2 refuses one while the
 * account's jobs are still writing their results); refused every time, it is a conflict to try later, never a 500.
 */
async function removeAccount(deps: Pick<Deps, "db" | "bucket">, id: string): Promise<Result<{ objects: number }>> {
  try {
    const objects = await deletePrefix(deps.bucket, userPrefix(id));
    await deps.db.delete(users).where(eq(users.id, id));
    return ok({ objects });
  } catch (e) {
    log.warn("fixture user not removed", { userId: id, error: e instanceof Error ? e.message : String(e) });
    return fail("conflict", "The user's jobs are still writing their results; remove the user again in a moment.");
  }
}

// Columns that change on their own (activity timestamps, health probes) are left
// out of the state digest, so it shows only what a request deliberately wrote. The landing's figures row is a
// cache of other tables that the first request of each hour recomputes (ADR 0231), whoever sends it: a hostile
// case that happened to be that request was seen "changing stored state".
const VOLATILE: Record<string, string[]> = { users: ["last_active_at", "updated_at"], api_keys: ["last_used_at"] };
const SKIPPED_TABLES = new Set(["health_checks", "d1_migrations", "_cf_KV", "sqlite_sequence", "site_figures"]);

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A digest of every D1 table and every R2 object, so a test can prove that a refused request changed nothing. */
export async function stateDigest(deps: Pick<Deps, "env" | "bucket">) {
  const DB = deps.env.DB;
  const tables = await DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{
    name: string;
  }>();
  const d1: Record<string, { rows: number; digest: string }> = {};
  for (const { name } of tables.results) {
    if (SKIPPED_TABLES.has(name) || name.startsWith("sqlite_") || name.startsWith("_cf_")) continue;
    const { results } = await DB.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all<Record<string, unknown>>();
    const skip = VOLATILE[name] ?? [];
    const rows = results.map((r) => Object.entries(r).filter(([k]) => !skip.includes(k)));
    d1[name] = { rows: results.length, digest: await sha256(JSON.stringify(rows)) };
  }
  const r2: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.bucket.list({ cursor, limit: 1000 });
    for (const o of page.objects) if (!o.key.startsWith("health/")) r2.push(`${o.key}:${o.size}:${o.etag}`);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return { d1, r2: { objects: r2.length, digest: await sha256(r2.join("\n")) } };
}

/**
 * Benchmark: a user's balance as their object answers it, with no session and no rate limit: the bench's "second
 * request of the same user" while that user's jobs run (bench/object.ts). Not found for an unknown user.
 */
export async function benchBalance(deps: Pick<Deps, "db" | "env">, userId: string) {
  const user = await deps.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).get();
  if (!user) return NOT_FOUND;
  return ok({ credits: await userObject(deps.env, userId).balance(userId) });
}

/** Benchmark: where the user's last jobs' time went, as their object recorded it (jobs/clock.ts). */
export async function benchJobTimings(deps: Pick<Deps, "db" | "env">, userId: string) {
  const user = await deps.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).get();
  if (!user) return NOT_FOUND;
  return ok({ jobs: await userObject(deps.env, userId).jobTimings() });
}

/**
 * Benchmark: `count` users each make `perUser + 1` concurrent 1-credit reservations against a balance of exactly
 * `perUser`; reports throughput and whether any balance went negative (npm run bench).
 */
export async function benchReservations(deps: Pick<Deps, "db" | "env">, count: number, perUser: number) {
  const { db, env } = deps;
  const now = Date.now();
  const ids = Array.from({ length: count }, () => randomToken());
  await db.batch(
    ids.map((id) =>
      db.insert(users).values({
        id,
        email: `bench-${id}@example.test`,
        name: "bench",
        emailVerifiedAt: now,
        createdAt: now,
        updatedAt: now,
      }),
    ) as [never, ...never[]],
  );
  await Promise.all(
    ids.map((id) =>
      userObject(env, id).grant(id, {
        amount: perUser,
        source: "admin",
        reason: "bench",
        idempotencyKey: `bench:${id}`,
      }),
    ),
  );
  const started = performance.now();
  const results = await Promise.all(
    ids.flatMap((id) =>
      Array.from({ length: perUser + 1 }, (_, i) => userObject(env, id).reserve(id, `bench:${id}:${i}`, 1, "bench")),
    ),
  );
  const ms = performance.now() - started;
  const succeeded = results.filter((r) => r.ok).length;
  const negative = results.some((r) => r.balance < 0);
  return { attempts: results.length, succeeded, refused: results.length - succeeded, ms, negative };
}

export const finishedJobsInput = z.object({
  userId: z.string().regex(/^[a-z0-9]{1,64}$/),
  /** Each job: how it ended and how long it ran, ending `agoMs` before now (default a minute). */
  jobs: z
    .array(
      z.object({
        status: z.enum(["succeeded", "failed"]),
        /** From the request to the result, queue and gate included. */
        ms: z.number().int().min(0).max(3_600_000),
        agoMs: z.number().int().min(0).optional(),
        /** A batch member (reported apart from single photos). */
        batch: z.boolean().optional(),
      }),
    )
    .min(1)
    .max(500),
});

/**
 * Finished jobs with known outcomes and times, on one placeholder photo of the user (no bytes): what the landing
 * page's measured figures are computed from (docs/decisions/0185-measured-landing-figures.md).
 */
export async function seedFinishedJobs(deps: Pick<Deps, "db">, input: z.infer<typeof finishedJobsInput>) {
  const { db } = deps;
  const now = Date.now();
  const user = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, input.userId) });
  if (!user) return fail("not_found", "No such user.");
  const photoId = randomToken();
  const key = `fixture/${photoId}`;
  await db.insert(photos).values({
    ...{ id: photoId, userId: input.userId, name: "Fixture", originalKey: key, thumbKey: key },
    ...{ contentType: "image/jpeg", bytes: 1, width: 1, height: 1, thumbWidth: 1, thumbHeight: 1, createdAt: now },
  });
  const rows = input.jobs.map((j) => {
    const finishedAt = now - (j.agoMs ?? 60_000);
    return {
      id: randomToken(),
      userId: input.userId,
      photoId,
      kind: "stage" as const,
      params: {},
      status: j.status,
      error: j.status === "failed" ? "fixture" : null,
      createdAt: finishedAt - j.ms,
      startedAt: finishedAt - j.ms,
      finishedAt,
      batchId: j.batch ? "fixture-batch" : null,
    };
  });
  // D1 binds at most 100 values per statement: 5 rows of 15 each.
  for (let i = 0; i < rows.length; i += 5) await db.insert(jobs).values(rows.slice(i, i + 5));
  return ok({ jobs: rows.length });
}

const limits = z.object({ mark: z.number().min(0), refuse: z.number().min(0).nullable() });
/** The structure check's limits for one user's results, per kind (null: production's), for an e2e test. */
export const structureLimitsInput = z.object({
  limits: z.object({ stage: limits, removal: limits, sky: limits }).partial().nullable(),
});

/**
 * Sets the structure check's limits for one fixture user's results (docs/decisions/0215-flag-when-unsure.md): how an
 * end-to-end test runs a refusal while production refuses nothing. The user's object refuses it without dev tools.
 */
export async function setStructureLimits(
  deps: Pick<Deps, "env">,
  userId: string,
  input: z.infer<typeof structureLimitsInput>,
): Promise<void> {
  await userObject(deps.env, userId).setStructureLimitsForTesting(input.limits);
}
