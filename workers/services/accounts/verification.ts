import { users } from "@db/schema";
import { config } from "@workers/config";
import { log } from "@workers/lib/log";
import { userObject } from "@workers/objects/client";
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { MESSAGES } from "~/shared/account-messages";
import { type AccountDeps, deliverLater, type Failure, invalidFields } from "./account-deps";
import { appLink, verificationEmail } from "./emails";
import { checkLimits, LIMITS } from "./throttle";
import { consumeToken, issueToken, revokeTokens } from "./tokens";
import { emailField } from "./validation";

/** Issues a 24-hour verification link and e-mails it, after the answer. */
export function sendVerification(
  deps: AccountDeps,
  user: { id: string; email: string; name: string },
  redirectTo: string | null,
): void {
  deliverLater(deps, "verification", async () => {
    const now = deps.now ?? Date.now();
    const token = await issueToken(
      deps.db,
      { userId: user.id, email: user.email, purpose: "verify_email", redirectTo },
      now,
    );
    return verificationEmail(user.email, user.name, appLink(deps.env.APP_ORIGIN, "/verify-email", token));
  });
}

/**
 * Marks the address verified. On the first verification of an account the
 * free trial credits (SIGNUP_CREDITS) are granted through the user's Durable
 * Object; the idempotency key makes a second grant impossible.
 * Returns whether this call did the verifying.
 */
export async function markVerified(deps: Pick<AccountDeps, "db" | "env" | "now">, userId: string): Promise<boolean> {
  const now = deps.now ?? Date.now();
  const changed = await deps.db
    .update(users)
    .set({ emailVerifiedAt: now, updatedAt: now })
    .where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)))
    .returning({ id: users.id })
    .all();
  if (changed.length === 0) return false;
  try {
    await userObject(deps.env, userId).grantSignupCredits(userId);
  } catch (err) {
    // Verified stays verified; the credits are still owed and granted at the next sign-in or by the daily sweep.
    log.warn("trial credits not granted yet", { userId, err });
  }
  return true;
}

/**
 * Free trial credits still owed to a verified user (a Durable Object failure
 * right after verification): granted now. Idempotent in the user's object (one
 * grant per verified e-mail address); called at sign-in and by the daily sweep.
 */
export async function grantOwedTrialCredits(
  deps: Pick<AccountDeps, "env">,
  user: { id: string; emailVerifiedAt: number | null; signupCreditsGranted: number },
): Promise<void> {
  if (user.emailVerifiedAt === null || user.signupCreditsGranted !== 0) return;
  if (config(deps.env).SIGNUP_CREDITS <= 0) return;
  await userObject(deps.env, user.id).grantSignupCredits(user.id);
}

/** The daily sweep: every verified user still owed trial credits gets them (at most `limit` per run). */
export async function grantAllOwedTrialCredits(deps: Pick<AccountDeps, "env" | "db">, limit = 200): Promise<number> {
  if (config(deps.env).SIGNUP_CREDITS <= 0) return 0;
  const owed = await deps.db
    .select({ id: users.id, emailVerifiedAt: users.emailVerifiedAt, signupCreditsGranted: users.signupCreditsGranted })
    .from(users)
    .where(and(isNotNull(users.emailVerifiedAt), eq(users.signupCreditsGranted, 0)))
    .limit(limit)
    .all();
  for (const u of owed) await grantOwedTrialCredits(deps, u);
  return owed.length;
}

export type VerifyResult = { ok: true; redirectTo: string | null } | Failure;

/** Spends a verification link. */
export async function verifyEmail(deps: AccountDeps, token: string): Promise<VerifyResult> {
  const now = deps.now ?? Date.now();
  const spent = await consumeToken(deps.db, token, "verify_email", now);
  if (!spent) return { ok: false, code: "invalid", error: MESSAGES.linkInvalid };
  const user = await deps.db.select({ email: users.email }).from(users).where(eq(users.id, spent.userId)).get();
  // A link sent to an address the account no longer has proves nothing.
  if (!user || user.email !== spent.email) return { ok: false, code: "invalid", error: MESSAGES.linkInvalid };
  await markVerified({ ...deps, now }, spent.userId);
  await revokeTokens(deps.db, spent.userId, "verify_email");
  return { ok: true, redirectTo: spent.redirectTo };
}

export type ResendResult = { ok: true; message: string } | Failure<"email">;

/**
 * Sends a fresh verification link when the account exists and is not verified.
 * The answer is the same in every case, so it tells nobody who has an account.
 */
export async function resendVerification(
  deps: AccountDeps,
  input: { email: unknown; redirectTo?: string | null },
): Promise<ResendResult> {
  const parsed = emailField.safeParse(input.email);
  if (!parsed.success) return invalidFields({ email: parsed.error.issues[0]?.message });
  const email = parsed.data;
  const limited = await checkLimits(deps, LIMITS.resend, email);
  if (limited) return limited;
  const user = await deps.db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, email) });
  if (user && user.emailVerifiedAt === null) sendVerification(deps, user, input.redirectTo ?? null);
  return { ok: true, message: MESSAGES.verificationSent };
}
