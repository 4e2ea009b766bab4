import type { Database } from "@db/client";
import { type AuditAction, auditLog, creditGrants, creditLedger, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { type Along, run, type Stmt } from "@workers/objects/user/batch";
import { and, eq } from "drizzle-orm";
import {
  allocate,
  alreadyRecorded,
  balanceDelta,
  expireGrants,
  GRANT_LIFETIME_MS,
  insufficient,
  type LedgerResult,
  ledgerRow,
  recordedQuery,
  spendFromGrants,
  userNotFound,
} from "./ledger-rows";
import { balanceQuery, type CreditView, cachedBalance, runAndView } from "./view";

// Credits given and taken outside jobs: grants (plans, admins, the free trial)
// and an admin's deduction, each with its ledger row and, for an admin, its
// audit row in the same batch.

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
  along: Pick<Along, "writes"> = {},
): Promise<LedgerResult<{ duplicate: boolean; recorded?: number; view?: CreditView | null }>> {
  if (!Number.isInteger(input.amount) || input.amount <= 0) throw new Error("grant amount must be a positive integer");
  const [balanceRows, recorded] = await db.batch([balanceQuery(db, userId), recordedQuery(db, input.idempotencyKey)]);
  const before = balanceRows[0]?.credits;
  if (before === undefined) return userNotFound();
  // A repeat answers the amount its key recorded: a key used for another amount is the caller's to refuse.
  if (recorded[0]) return { ok: true, duplicate: true, recorded: recorded[0].amount, balance: before };
  const writes = [
    ...grantStatements(db, userId, input, now),
    ...auditRow(db, userId, input.audit, now, { amount: input.amount, balanceAfter: before + input.amount }),
    ...(along.writes ?? []),
  ];
  return { ok: true, duplicate: false, balance: before + input.amount, view: await runAndView(db, userId, writes) };
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
): Promise<LedgerResult<{ duplicate: boolean; recorded?: number }>> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error("deduct amount must be a positive integer");
  if ((await cachedBalance(db, userId)) === null) return userNotFound();
  const recorded = await recordedQuery(db, idempotencyKey).get();
  if (recorded)
    return { ok: true, duplicate: true, recorded: recorded.amount, balance: (await cachedBalance(db, userId)) ?? 0 };
  await expireGrants(db, userId, now);
  const balance = (await cachedBalance(db, userId)) ?? 0;
  const allocations = await allocate(db, userId, amount, now);
  if (!allocations) return insufficient(balance);
  await run(db, [
    ...spendFromGrants(db, allocations),
    db.insert(creditLedger).values(ledgerRow(userId, "adjust", -amount, reason, idempotencyKey, now, { actorId })),
    balanceDelta(db, userId, -amount, now),
    ...auditRow(db, userId, audit, now, { amount: -amount, balanceAfter: balance - amount }),
  ]);
  return { ok: true, duplicate: false, balance: balance - amount };
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
  if (!user) return userNotFound();
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
