import type { Database } from "@db/client";
import {
  type Allocation,
  type AuditAction,
  auditLog,
  creditGrants,
  creditLedger,
  creditReservations,
  users,
} from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { and, asc, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";

// The credit ledger. Every function here is called only from the user's
// Durable Object (workers/objects/user-object.ts), which runs them one at a
// time per user; each write is one atomic D1 batch whose CHECK constraints
// (credits >= 0, remaining >= 0) make a wrong computation fail instead of
// going negative. See docs/decisions/0006-credit-ledger.md.

export const GRANT_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
export const RESERVATION_TIMEOUT_MS = 10 * 60 * 1000;
export const INSUFFICIENT_CREDITS = "Insufficient credits";
export const USER_NOT_FOUND = "User not found";

export type LedgerResult<T = object> =
  | ({ ok: true; balance: number } & T)
  | { ok: false; error: string; balance: number };

export type Stmt = BatchItem<"sqlite">;

/** The user's cached balance (users.credits), as a query to run alone or in a batch. */
function balanceQuery(db: Database, userId: string) {
  return db.select({ credits: users.credits }).from(users).where(eq(users.id, userId));
}

export async function cachedBalance(db: Database, userId: string): Promise<number | null> {
  const row = await balanceQuery(db, userId).get();
  return row ? row.credits : null;
}

/**
 * Runs `writes`, then `reads`, in one atomic D1 batch (no round trip for nothing) and answers the reads' results:
 * the rows as those writes left them.
 */
export async function run(db: Database, writes: readonly Stmt[], reads: readonly Stmt[] = []): Promise<unknown[]> {
  const all = [...writes, ...reads];
  if (all.length === 0) return [];
  const results = (await db.batch(all as unknown as [Stmt, ...Stmt[]])) as unknown[];
  return results.slice(writes.length);
}

/** The user's plan (users.plan), as a query to run alone or in a batch. */
export function planQuery(db: Database, userId: string) {
  return db.select({ plan: users.plan }).from(users).where(eq(users.id, userId));
}

function ledgerRow(
  userId: string,
  kind: (typeof creditLedger.$inferInsert)["kind"],
  amount: number,
  reason: string,
  idempotencyKey: string,
  now: number,
  extra: Partial<typeof creditLedger.$inferInsert> = {},
) {
  return { id: randomToken(), userId, kind, amount, reason, idempotencyKey, createdAt: now, ...extra };
}

function balanceDelta(db: Database, userId: string, delta: number, now: number): Stmt {
  return db
    .update(users)
    .set({ credits: sql`${users.credits} + ${delta}`, updatedAt: now })
    .where(eq(users.id, userId));
}

/** The ledger row already written under an idempotency key, if any, as a query to run alone or in a batch. */
function recordedQuery(db: Database, idempotencyKey: string) {
  return db.select({ id: creditLedger.id }).from(creditLedger).where(eq(creditLedger.idempotencyKey, idempotencyKey));
}

export async function alreadyRecorded(db: Database, idempotencyKey: string): Promise<boolean> {
  return Boolean(await recordedQuery(db, idempotencyKey).get());
}

/** Expires every grant of the user whose time has come. Returns the credits removed. */
export async function expireGrants(db: Database, userId: string, now: number): Promise<number> {
  const due = await db
    .select()
    .from(creditGrants)
    .where(and(eq(creditGrants.userId, userId), gt(creditGrants.remaining, 0), lte(creditGrants.expiresAt, now)))
    .all();
  if (due.length === 0) return 0;
  const stmts: Stmt[] = [];
  let total = 0;
  for (const g of due) {
    total += g.remaining;
    stmts.push(
      db
        .update(creditGrants)
        .set({ remaining: 0 })
        .where(and(eq(creditGrants.id, g.id), eq(creditGrants.remaining, g.remaining))),
      db.insert(creditLedger).values(
        ledgerRow(userId, "expire", -g.remaining, "Credits expired", `expire:${g.id}:${now}:${randomToken(8)}`, now, {
          grantId: g.id,
        }),
      ),
    );
  }
  stmts.push(balanceDelta(db, userId, -total, now));
  await run(db, stmts);
  return total;
}

export interface GrantInput {
  amount: number;
  source: "signup" | "plan" | "admin";
  reason: string;
  idempotencyKey: string;
  actorId?: string | null;
  kind?: "grant" | "adjust";
  /** An admin action's audit row, written in the same atomic batch as the credits. */
  audit?: AuditEntry;
}

/** Plain data (it crosses the Durable Object RPC boundary) for one audit_log row. */
export interface AuditEntry {
  id: string;
  actorId: string | null;
  actorEmail: string;
  action: AuditAction;
  reason: string;
  details?: Record<string, unknown>;
}

function auditRow(
  db: Database,
  userId: string,
  entry: AuditEntry | undefined,
  now: number,
  details: Record<string, unknown>,
): Stmt[] {
  if (!entry) return [];
  return [
    db.insert(auditLog).values({
      id: entry.id,
      actorId: entry.actorId,
      actorEmail: entry.actorEmail,
      action: entry.action,
      targetUserId: userId,
      reason: entry.reason,
      details: { ...entry.details, ...details },
      createdAt: now,
    }),
  ];
}

/**
 * The statements that grant credits, for a caller that commits them in one
 * batch with other writes (a payment event and its record). The caller must
 * have checked `alreadyRecorded` for the key inside the user's Durable Object;
 * the unique index on the key makes a mistake fail the whole batch instead of
 * granting twice.
 */
export function grantStatements(db: Database, userId: string, input: GrantInput, now: number): Stmt[] {
  if (!Number.isInteger(input.amount) || input.amount <= 0) throw new Error("grant amount must be a positive integer");
  const grantId = randomToken();
  return [
    db.insert(creditGrants).values({
      id: grantId,
      userId,
      source: input.source,
      amount: input.amount,
      remaining: input.amount,
      expiresAt: now + GRANT_LIFETIME_MS,
      createdAt: now,
    }),
    db.insert(creditLedger).values(
      ledgerRow(userId, input.kind ?? "grant", input.amount, input.reason, input.idempotencyKey, now, {
        grantId,
        actorId: input.actorId ?? null,
      }),
    ),
    balanceDelta(db, userId, input.amount, now),
  ];
}

/**
 * Grants credits once per idempotency key. Two D1 round trips: the balance and the key in one, the write in the
 * other. The write's batch ends by reading the user's view (balance and open grants) as that batch left it, so the
 * user's object can decide the next reservations without reading it again (ADR 0135).
 */
export async function grant(
  db: Database,
  userId: string,
  input: GrantInput,
  now: number,
  alsoRun: Stmt[] = [],
): Promise<LedgerResult<{ duplicate: boolean; view?: CreditView | null }>> {
  if (!Number.isInteger(input.amount) || input.amount <= 0) throw new Error("grant amount must be a positive integer");
  const [balanceRows, recorded] = await db.batch([balanceQuery(db, userId), recordedQuery(db, input.idempotencyKey)]);
  const before = balanceRows[0]?.credits;
  if (before === undefined) return { ok: false, error: USER_NOT_FOUND, balance: 0 };
  if (recorded.length > 0) return { ok: true, duplicate: true, balance: before };
  const writes = [
    ...grantStatements(db, userId, input, now),
    ...auditRow(db, userId, input.audit, now, { amount: input.amount, balanceAfter: before + input.amount }),
    ...alsoRun,
  ];
  return { ok: true, duplicate: false, balance: before + input.amount, view: await runAndView(db, userId, writes) };
}

/**
 * Runs `writes` in one batch that ends by reading the user's view (balance and open grants) as the batch left it:
 * the object keeps it and decides its next reservations without a round trip of their own (ADR 0135).
 */
async function runAndView(db: Database, userId: string, writes: Stmt[]): Promise<CreditView | null> {
  const [user, grants] = await run(db, writes, viewQueries(db, userId));
  return toView(user as { credits: number }[], grants as CreditView["grants"]);
}

/** Takes `amount` from the grants that expire first. Null when the balance is short. */
async function allocate(db: Database, userId: string, amount: number, now: number): Promise<Allocation[] | null> {
  const open = await db
    .select({ id: creditGrants.id, remaining: creditGrants.remaining })
    .from(creditGrants)
    .where(and(eq(creditGrants.userId, userId), gt(creditGrants.remaining, 0), gt(creditGrants.expiresAt, now)))
    .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.createdAt))
    .all();
  const allocations: Allocation[] = [];
  let left = amount;
  for (const g of open) {
    if (left === 0) break;
    const take = Math.min(g.remaining, left);
    allocations.push({ grantId: g.id, amount: take });
    left -= take;
  }
  return left === 0 ? allocations : null;
}

function spendFromGrants(db: Database, allocations: Allocation[]): Stmt[] {
  return allocations.map((a) =>
    db
      .update(creditGrants)
      .set({ remaining: sql`${creditGrants.remaining} - ${a.amount}` })
      .where(eq(creditGrants.id, a.grantId)),
  );
}

export async function reserve(
  db: Database,
  userId: string,
  key: string,
  amount: number,
  reason: string,
  now: number,
  alsoRun: Stmt[] = [],
): Promise<LedgerResult<{ status: "held" | "committed" | "refunded" }>> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error("reserve amount must be a positive integer");
  const existing = await db.select().from(creditReservations).where(eq(creditReservations.key, key)).get();
  if (existing) {
    return { ok: true, status: existing.status, balance: (await cachedBalance(db, userId)) ?? 0 };
  }
  if ((await cachedBalance(db, userId)) === null) return { ok: false, error: USER_NOT_FOUND, balance: 0 };
  await expireGrants(db, userId, now);
  const balance = (await cachedBalance(db, userId)) ?? 0;
  const allocations = await allocate(db, userId, amount, now);
  if (!allocations) return { ok: false, error: INSUFFICIENT_CREDITS, balance };
  await run(db, [
    ...spendFromGrants(db, allocations),
    db.insert(creditReservations).values({ key, userId, amount, allocations, status: "held", createdAt: now }),
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "reserve", -amount, reason, `reserve:${key}`, now, { reservationKey: key })),
    balanceDelta(db, userId, -amount, now),
    ...alsoRun,
  ]);
  return { ok: true, status: "held", balance: balance - amount };
}

/**
 * The reservation `key` of this user while it is still held, with the balance;
 * otherwise the answer to give at once: not found, or already settled (ok only
 * when it was settled the same way, so a repeated commit or refund is a no-op).
 */
async function heldReservation(
  db: Database,
  userId: string,
  key: string,
  as: "committed" | "refunded",
): Promise<
  | { r: typeof creditReservations.$inferSelect; balance: number; settled?: undefined }
  | { r?: undefined; balance: number; settled: LedgerResult<{ status: string }> }
> {
  const [reservationRows, balanceRows] = await db.batch([
    db.select().from(creditReservations).where(eq(creditReservations.key, key)),
    balanceQuery(db, userId),
  ]);
  const r = reservationRows[0];
  const balance = balanceRows[0]?.credits ?? 0;
  if (!r || r.userId !== userId) return { balance, settled: { ok: false, error: "Reservation not found", balance } };
  if (r.status !== "held")
    return { balance, settled: { ok: r.status === as, status: r.status, balance } as LedgerResult<{ status: string }> };
  return { r, balance };
}

/**
 * Settles a held reservation as spent, with `alsoRun` in the same batch. `thenRead` are queries run at the end of
 * that batch (what the commit changed, as it stands after it); their results come back as `read` when committed.
 * `writesAfter`: work the writes must follow (a result's R2 write), awaited after the reservation is read, so the
 * two overlap; when it fails, nothing is written and the commit throws it.
 */
export async function commit(
  db: Database,
  userId: string,
  key: string,
  now: number,
  alsoRun: Stmt[] = [],
  opts: { thenRead?: readonly Stmt[]; writesAfter?: Promise<unknown> } = {},
): Promise<LedgerResult<{ status: string; read?: unknown[] }>> {
  const { thenRead = [], writesAfter } = opts;
  const { balance, settled } = await heldReservation(db, userId, key, "committed");
  if (settled) return settled;
  await writesAfter;
  const writes = [
    db
      .update(creditReservations)
      .set({ status: "committed", settledAt: now })
      .where(and(eq(creditReservations.key, key), eq(creditReservations.status, "held"))),
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "commit", 0, "Image delivered", `commit:${key}`, now, { reservationKey: key })),
    ...alsoRun,
  ];
  return { ok: true, status: "committed", balance, read: await run(db, writes, thenRead) };
}

export async function refund(
  db: Database,
  userId: string,
  key: string,
  reason: string,
  now: number,
  alsoRun: Stmt[] = [],
): Promise<LedgerResult<{ status: string }>> {
  const { r, settled } = await heldReservation(db, userId, key, "refunded");
  if (settled) return settled;
  await run(db, [
    ...r.allocations.map((a) =>
      db
        .update(creditGrants)
        .set({ remaining: sql`${creditGrants.remaining} + ${a.amount}` })
        .where(eq(creditGrants.id, a.grantId)),
    ),
    db
      .update(creditReservations)
      .set({ status: "refunded", settledAt: now })
      .where(and(eq(creditReservations.key, key), eq(creditReservations.status, "held"))),
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "refund", r.amount, reason, `refund:${key}`, now, { reservationKey: key })),
    balanceDelta(db, userId, r.amount, now),
    ...alsoRun,
  ]);
  // A refund into a grant that expired meanwhile is expired again at once.
  await expireGrants(db, userId, now);
  return { ok: true, status: "refunded", balance: (await cachedBalance(db, userId)) ?? 0 };
}

/** Removes credits permanently (admin adjustment), never below zero. */
export async function deduct(
  db: Database,
  userId: string,
  amount: number,
  reason: string,
  idempotencyKey: string,
  actorId: string | null,
  now: number,
  audit?: AuditEntry,
): Promise<LedgerResult<{ duplicate: boolean }>> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error("deduct amount must be a positive integer");
  if ((await cachedBalance(db, userId)) === null) return { ok: false, error: USER_NOT_FOUND, balance: 0 };
  if (await alreadyRecorded(db, idempotencyKey)) {
    return { ok: true, duplicate: true, balance: (await cachedBalance(db, userId)) ?? 0 };
  }
  await expireGrants(db, userId, now);
  const balance = (await cachedBalance(db, userId)) ?? 0;
  const allocations = await allocate(db, userId, amount, now);
  if (!allocations) return { ok: false, error: INSUFFICIENT_CREDITS, balance };
  await run(db, [
    ...spendFromGrants(db, allocations),
    db.insert(creditLedger).values(ledgerRow(userId, "adjust", -amount, reason, idempotencyKey, now, { actorId })),
    balanceDelta(db, userId, -amount, now),
    ...auditRow(db, userId, audit, now, { amount: -amount, balanceAfter: balance - amount }),
  ]);
  return { ok: true, duplicate: false, balance: balance - amount };
}

/** Reservations held longer than the timeout: their job died, so the credit goes back. */
export async function staleReservationKeys(db: Database, userId: string, now: number): Promise<string[]> {
  const rows = await db
    .select({ key: creditReservations.key })
    .from(creditReservations)
    .where(
      and(
        eq(creditReservations.userId, userId),
        eq(creditReservations.status, "held"),
        lte(creditReservations.createdAt, now - RESERVATION_TIMEOUT_MS),
      ),
    )
    .all();
  return rows.map((r) => r.key);
}

/**
 * The free trial credits (docs/product.md, "Plans and credits": SIGNUP_CREDITS, once per verified
 * e-mail, never plan credits). The flag on the user is set in the same batch
 * as the grant, so a repeated verification grants nothing.
 */
export async function grantSignupCredits(
  db: Database,
  userId: string,
  amount: number,
  now: number,
): Promise<LedgerResult<{ granted: number; view?: CreditView | null }>> {
  const user = await db
    .select({
      credits: users.credits,
      verified: users.emailVerifiedAt,
      done: users.signupCreditsGranted,
      email: users.email,
    })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  if (!user) return { ok: false, error: USER_NOT_FOUND, balance: 0 };
  if (user.done || user.verified === null || !Number.isInteger(amount) || amount <= 0) {
    return { ok: true, granted: 0, balance: user.credits };
  }
  const key = `signup:${user.email.toLowerCase()}`;
  const markDone = db
    .update(users)
    .set({ signupCreditsGranted: 1 })
    .where(and(eq(users.id, userId), eq(users.signupCreditsGranted, 0)));
  if (await alreadyRecorded(db, key)) {
    await run(db, [markDone]);
    return { ok: true, granted: 0, balance: user.credits };
  }
  const view = await runAndView(db, userId, [
    ...grantStatements(
      db,
      userId,
      { amount, source: "signup", reason: "Free trial credits", idempotencyKey: key },
      now,
    ),
    markDone,
  ]);
  return { ok: true, granted: amount, balance: user.credits + amount, view };
}

// --- Group commit of reservations (docs/decisions/0135-ledger-group-commit.md) ---
//
// The user's object keeps its own view of the balance and the open grants while
// it lives. It is exact because the object is the only writer of that user's
// credits: the view is loaded from D1 on first use, advanced only after a
// group's batch has been written or read at the end of a grant's own batch
// (runAndView), and dropped after any other change and after any failed write
// (the next group loads it again).

/** Reservations decided together and written in one D1 batch, at most. */
export const MAX_GROUP = 100;
/** D1 allows 100 bound parameters per statement. */
const KEYS_PER_LOOKUP = 90;
/** A reservation row binds 6 parameters, a reserve ledger row 8 (the rest are defaults). */
const RESERVATION_ROWS_PER_INSERT = 15;
const LEDGER_ROWS_PER_INSERT = 12;

export interface CreditView {
  balance: number;
  /** Grants with credits left, in spending order (expiring first). */
  grants: { id: string; remaining: number; expiresAt: number; createdAt: number }[];
}

export interface ReserveRequest {
  key: string;
  amount: number;
  reason: string;
  /** Written in the same batch as this reservation, only if it is taken (e.g. the job row). */
  alsoRun?: Stmt[];
}

/** A reservation as it waits in the object: its extra statements are made once the group's `now` is known. */
export interface ReserveRequestOf extends Omit<ReserveRequest, "alsoRun"> {
  alsoRun?: (now: number) => Stmt[];
}

export type ReserveAnswer = LedgerResult<{ status: "held" | "committed" | "refunded" }>;

function viewQueries(db: Database, userId: string) {
  return [
    balanceQuery(db, userId),
    db
      .select({
        id: creditGrants.id,
        remaining: creditGrants.remaining,
        expiresAt: creditGrants.expiresAt,
        createdAt: creditGrants.createdAt,
      })
      .from(creditGrants)
      .where(and(eq(creditGrants.userId, userId), gt(creditGrants.remaining, 0)))
      .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.createdAt)),
  ] as const;
}

function toView(user: { credits: number }[], grants: CreditView["grants"]): CreditView | null {
  const row = user[0];
  return row ? { balance: row.credits, grants } : null;
}

/** The user's balance and open grants from D1, or null when the user does not exist. */
export async function loadView(db: Database, userId: string): Promise<CreditView | null> {
  const [user, grants] = await db.batch(viewQueries(db, userId));
  return toView(user, grants);
}

/** Queries for the status of each of `unique` (distinct keys) that is already reserved. */
function keyStatusQueries(db: Database, unique: string[]) {
  const queries = [];
  for (let i = 0; i < unique.length; i += KEYS_PER_LOOKUP) {
    queries.push(
      db
        .select({ key: creditReservations.key, status: creditReservations.status })
        .from(creditReservations)
        .where(inArray(creditReservations.key, unique.slice(i, i + KEYS_PER_LOOKUP))),
    );
  }
  return queries;
}

/** loadView and the user's plan, in the same D1 round trip (the job queue needs both to start jobs). */
export async function loadViewAndPlan(
  db: Database,
  userId: string,
  /** More reads for the same round trip; their results come back as `read`. */
  alsoRead: readonly Stmt[] = [],
): Promise<{ view: CreditView | null; plan: string | null; read: unknown[] }> {
  const [user, grants, plan, ...read] = await run(
    db,
    [],
    [...viewQueries(db, userId), planQuery(db, userId), ...alsoRead],
  );
  const planRow = (plan as { plan: string | null }[])[0];
  return {
    view: toView(user as { credits: number }[], grants as CreditView["grants"]),
    plan: planRow?.plan ?? null,
    read,
  };
}

/**
 * In one D1 round trip: the status of every key already reserved and, when
 * `view` is null, the view itself (`undefined` then means the user does not exist).
 */
async function lookUp(
  db: Database,
  userId: string,
  keys: string[],
  view: CreditView | null,
): Promise<{ existing: Map<string, ReserveStatus>; view: CreditView | null }> {
  const keyQueries = keyStatusQueries(db, [...new Set(keys)]);
  const queries = [...(view ? [] : viewQueries(db, userId)), ...keyQueries];
  const results = await run(db, [], queries);
  const keyRows = results.slice(view ? 0 : 2) as { key: string; status: ReserveStatus }[][];
  const existing = new Map(keyRows.flat().map((r) => [r.key, r.status]));
  if (view) return { existing, view };
  return {
    existing,
    view: toView(results[0] as { credits: number }[], results[1] as CreditView["grants"]),
  };
}

type ReserveStatus = "held" | "committed" | "refunded";

/**
 * Decides `requests` in order against `view` (no I/O): each takes its credits
 * from the grants that expire first or is refused; a key already known (in D1
 * or earlier in the group) gets that reservation's status. Returns one answer
 * per request, the statements that write the taken ones (each its reservation
 * row and ledger row; each grant and users.credits updated once), and the view
 * once those statements are written.
 */
export function decideReservations(
  db: Database,
  userId: string,
  view: CreditView,
  requests: ReserveRequest[],
  existing: Map<string, ReserveStatus>,
  now: number,
): { answers: ReserveAnswer[]; stmts: Stmt[]; next: CreditView } {
  const grants = view.grants.filter((g) => g.expiresAt > now).map((g) => ({ ...g }));
  const known = new Map(existing);
  const spent = new Map<string, number>();
  const answers: ReserveAnswer[] = [];
  const rows: Stmt[] = [];
  const reservationRows: (typeof creditReservations.$inferInsert)[] = [];
  const ledgerRows: (typeof creditLedger.$inferInsert)[] = [];
  let balance = view.balance;
  for (const req of requests) {
    const status = known.get(req.key);
    if (status) {
      answers.push({ ok: true, status, balance });
      continue;
    }
    const allocations: Allocation[] = [];
    let left = req.amount;
    for (const g of grants) {
      if (left === 0) break;
      const take = Math.min(g.remaining, left);
      if (take > 0) allocations.push({ grantId: g.id, amount: take });
      left -= take;
    }
    if (left > 0) {
      answers.push({ ok: false, error: INSUFFICIENT_CREDITS, balance });
      continue;
    }
    for (const a of allocations) {
      const g = grants.find((x) => x.id === a.grantId);
      if (g) g.remaining -= a.amount;
      spent.set(a.grantId, (spent.get(a.grantId) ?? 0) + a.amount);
    }
    balance -= req.amount;
    known.set(req.key, "held");
    reservationRows.push({ key: req.key, userId, amount: req.amount, allocations, status: "held", createdAt: now });
    ledgerRows.push(
      ledgerRow(userId, "reserve", -req.amount, req.reason, `reserve:${req.key}`, now, { reservationKey: req.key }),
    );
    rows.push(...(req.alsoRun ?? []));
    answers.push({ ok: true, status: "held", balance });
  }
  // Many rows per INSERT (fewer statements to run), within D1's 100 bound parameters per statement.
  for (let i = 0; i < reservationRows.length; i += RESERVATION_ROWS_PER_INSERT) {
    rows.unshift(db.insert(creditReservations).values(reservationRows.slice(i, i + RESERVATION_ROWS_PER_INSERT)));
  }
  for (let i = 0; i < ledgerRows.length; i += LEDGER_ROWS_PER_INSERT) {
    rows.unshift(db.insert(creditLedger).values(ledgerRows.slice(i, i + LEDGER_ROWS_PER_INSERT)));
  }
  const taken = view.balance - balance;
  const stmts =
    taken === 0
      ? []
      : [
          ...[...spent].map(([grantId, amount]) =>
            db
              .update(creditGrants)
              .set({ remaining: sql`${creditGrants.remaining} - ${amount}` })
              .where(eq(creditGrants.id, grantId)),
          ),
          ...rows,
          balanceDelta(db, userId, -taken, now),
        ];
  return { answers, stmts, next: { balance, grants: grants.filter((g) => g.remaining > 0) } };
}

/**
 * Reserves for every request in one D1 batch (see decideReservations), from
 * `view` or, when null, from a fresh load. Returns the answers and the view
 * after the write; throws when the batch fails, having written nothing (the
 * caller drops its view). Grants due to expire are expired first, as
 * `reserve` does.
 */
export async function reserveGroup(
  db: Database,
  userId: string,
  view: CreditView | null,
  requests: ReserveRequest[],
  now: number,
  opts: {
    /** Set after an optimistic batch failed: decide from D1 this time. */
    fromD1?: boolean;
    /** Queries run at the end of the group's write batch; their results come back as `read` once it is written. */
    thenRead?: readonly Stmt[];
  } = {},
): Promise<{ answers: ReserveAnswer[]; view: CreditView | null; wrote: boolean; expired: boolean; read?: unknown[] }> {
  const { fromD1 = false, thenRead = [] } = opts;
  for (const r of requests) {
    if (!Number.isInteger(r.amount) || r.amount <= 0) throw new Error("reserve amount must be a positive integer");
  }
  if (requests.length === 0) return { answers: [], view, wrote: false, expired: false };
  if (view === null && !fromD1) {
    // Load the view alone (two reads, no key look-up) and decide optimistically as below; a user that does not
    // exist or a grant due to expire takes the full path.
    const loaded = await loadView(db, userId);
    if (loaded && !loaded.grants.some((g) => g.expiresAt <= now))
      return reserveGroup(db, userId, loaded, requests, now, { thenRead });
  }
  if (view && !fromD1 && !view.grants.some((g) => g.expiresAt <= now)) {
    // With a view in hand, decide as if no key were known yet, and write in the same batch that asks
    // for the keys it refused. A taken key is inserted: one that exists (its reservation row or ledger
    // row) makes the atomic batch fail, having written nothing, and the group is decided again below
    // from D1. A refused key might be a repeat of a held one: its status, read in the same batch,
    // answers it instead (it took nothing, so no other request's decision depends on it).
    const optimistic = decideReservations(db, userId, view, requests, new Map(), now);
    const refused = [...new Set(requests.filter((_, i) => !optimistic.answers[i]?.ok).map((r) => r.key))];
    const queries = keyStatusQueries(db, refused);
    try {
      const results = await run(db, optimistic.stmts, [...queries, ...thenRead]);
      const found = new Map(
        (results.slice(0, queries.length) as { key: string; status: ReserveStatus }[][])
          .flat()
          .map((r) => [r.key, r.status]),
      );
      const answers = optimistic.answers.map((a, i): ReserveAnswer => {
        const status = a.ok ? undefined : found.get(requests[i]?.key ?? "");
        return status ? { ok: true, status, balance: a.balance } : a;
      });
      return {
        answers,
        view: optimistic.next,
        wrote: optimistic.stmts.length > 0,
        expired: false,
        read: results.slice(queries.length),
      };
    } catch {
      return reserveGroup(db, userId, null, requests, now, { fromD1: true, thenRead });
    }
  }
  const { existing, view: loaded } = await lookUp(
    db,
    userId,
    requests.map((r) => r.key),
    view,
  );
  let current = loaded;
  if (current === null) {
    const balance = 0;
    const answers = requests.map((r): ReserveAnswer => {
      const status = existing.get(r.key);
      return status ? { ok: true, status, balance } : { ok: false, error: USER_NOT_FOUND, balance };
    });
    return { answers, view: null, wrote: false, expired: false };
  }
  const expired = current.grants.some((g) => g.expiresAt <= now);
  if (expired) {
    await expireGrants(db, userId, now);
    current = await loadView(db, userId);
    if (current === null) throw new Error(USER_NOT_FOUND);
  }
  const { answers, stmts, next } = decideReservations(db, userId, current, requests, existing, now);
  const read = await run(db, stmts, thenRead);
  return { answers, view: next, wrote: stmts.length > 0, expired, read };
}
