import type { Database } from "@db/client";
import { creditGrants, users } from "@db/schema";
import { run, type Stmt } from "@workers/objects/user/batch";
import { and, asc, eq, gt } from "drizzle-orm";

// The user's balance and open grants as the object sees them: read from D1, or
// kept between changes by the credit desk (desk.ts) while it is exact.

export interface CreditView {
  balance: number;
  /** Grants with credits left, in spending order (expiring first). */
  grants: { id: string; remaining: number; expiresAt: number; createdAt: number }[];
}

/** The user's cached balance (users.credits), as a query to run alone or in a batch. */
export function balanceQuery(db: Database, userId: string) {
  return db.select({ credits: users.credits }).from(users).where(eq(users.id, userId));
}

export async function cachedBalance(db: Database, userId: string): Promise<number | null> {
  const row = await balanceQuery(db, userId).get();
  return row ? row.credits : null;
}

/** The user's plan (users.plan), as a query to run alone or in a batch. */
export function planQuery(db: Database, userId: string) {
  return db.select({ plan: users.plan }).from(users).where(eq(users.id, userId));
}

export function viewQueries(db: Database, userId: string) {
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

export function toView(user: { credits: number }[], grants: CreditView["grants"]): CreditView | null {
  const row = user[0];
  return row ? { balance: row.credits, grants } : null;
}

/** The user's balance and open grants from D1, or null when the user does not exist. */
export async function loadView(db: Database, userId: string): Promise<CreditView | null> {
  const [user, grants] = await db.batch(viewQueries(db, userId));
  return toView(user, grants);
}

/**
 * Runs `writes` in one batch that ends by reading the user's view (balance and open grants) as the batch left it:
 * exact, since the batch that wrote also read it inside the object's queue (ADR 0135).
 */
export async function runAndView(db: Database, userId: string, writes: Stmt[]): Promise<CreditView | null> {
  const [user, grants] = await run(db, writes, viewQueries(db, userId));
  return toView(user as { credits: number }[], grants as CreditView["grants"]);
}

/** What a read named to loadViewAndPlan answers: its rows, or none when it was not sent (null). */
type Answer<Q> = Q extends null ? never[] : Awaited<Q>;

/**
 * loadView and the user's plan, in the same D1 round trip (the job queue needs both to start jobs), with more
 * reads named by the caller: each comes back under its name, typed as its query answers. A read given as null is
 * not sent, and answers no rows.
 */
export async function loadViewAndPlan<R extends Record<string, Stmt | null>>(
  db: Database,
  userId: string,
  alsoRead: R,
): Promise<{ view: CreditView | null; plan: string | null; read: { [K in keyof R]: Answer<R[K]> } }> {
  const sent = Object.values(alsoRead).filter((q): q is Stmt => q !== null);
  const [user, grants, plan, ...answers] = await run(
    db,
    [],
    [...viewQueries(db, userId), planQuery(db, userId), ...sent],
  );
  const planRow = (plan as { plan: string | null }[])[0];
  let next = 0;
  const read = Object.fromEntries(Object.entries(alsoRead).map(([n, q]) => [n, q === null ? [] : answers[next++]]));
  return {
    view: toView(user as { credits: number }[], grants as CreditView["grants"]),
    plan: planRow?.plan ?? null,
    read: read as { [K in keyof R]: Answer<R[K]> },
  };
}
