import type { Database } from "@db/client";
import { type EmailTokenPurpose, emailTokens } from "@db/schema";
import { randomToken, sha256Hex } from "@workers/lib/crypto";
import { and, eq, gt, isNull, lte, or } from "drizzle-orm";

// Single-use links sent by e-mail. The token (160 random bits) is only in the
// e-mail; D1 keeps its SHA-256, so a database leak yields no usable link.
const HOUR = 60 * 60 * 1000;
export const TOKEN_LIFETIME_MS: Record<EmailTokenPurpose, number> = {
  verify_email: 24 * HOUR,
  reset_password: HOUR,
};

const TOKEN_SHAPE = /^[a-z2-7]{32}$/;

export async function issueToken(
  db: Database,
  input: { userId: string; email: string; purpose: EmailTokenPurpose; redirectTo?: string | null },
  now: number,
): Promise<string> {
  const token = randomToken(20);
  await db.insert(emailTokens).values({
    id: sha256Hex(token),
    userId: input.userId,
    purpose: input.purpose,
    email: input.email,
    redirectTo: input.redirectTo ?? null,
    expiresAt: now + TOKEN_LIFETIME_MS[input.purpose],
    createdAt: now,
  });
  return token;
}

/** The row of this link while it is unused and unexpired. */
function live(token: string, purpose: EmailTokenPurpose, now: number) {
  return and(
    eq(emailTokens.id, sha256Hex(token)),
    eq(emailTokens.purpose, purpose),
    isNull(emailTokens.usedAt),
    gt(emailTokens.expiresAt, now),
  );
}

/** Whether a link is still usable, without spending it (for the page a link opens). */
export async function isTokenUsable(
  db: Database,
  token: string,
  purpose: EmailTokenPurpose,
  now: number,
): Promise<boolean> {
  if (!TOKEN_SHAPE.test(token)) return false;
  const row = await db
    .select({ id: emailTokens.id })
    .from(emailTokens)
    .where(live(token, purpose, now))
    .get();
  return Boolean(row);
}

/** A live link's account and address, without spending it (null when unknown, used or expired). */
export async function peekToken(
  db: Database,
  token: string,
  purpose: EmailTokenPurpose,
  now: number,
): Promise<{ userId: string; email: string } | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const row = await db
    .select({ userId: emailTokens.userId, email: emailTokens.email })
    .from(emailTokens)
    .where(live(token, purpose, now))
    .get();
  return row ?? null;
}

/**
 * Spends a link: one conditional UPDATE, so of two concurrent clicks exactly
 * one gets the row back. Null when the token is unknown, used or expired.
 */
export async function consumeToken(
  db: Database,
  token: string,
  purpose: EmailTokenPurpose,
  now: number,
): Promise<{ userId: string; email: string; redirectTo: string | null } | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const rows = await db
    .update(emailTokens)
    .set({ usedAt: now })
    .where(live(token, purpose, now))
    .returning({ userId: emailTokens.userId, email: emailTokens.email, redirectTo: emailTokens.redirectTo })
    .all();
  return rows[0] ?? null;
}

/** Statement that voids every other outstanding link of this purpose for the user. */
export function revokeTokens(db: Database, userId: string, purpose: EmailTokenPurpose) {
  return db.delete(emailTokens).where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose)));
}

/** Daily cron: drop links that were used or can no longer be. */
export async function purgeEmailTokens(db: Database, now: number): Promise<void> {
  await db.delete(emailTokens).where(or(lte(emailTokens.expiresAt, now), lte(emailTokens.usedAt, now - 24 * HOUR)));
}
