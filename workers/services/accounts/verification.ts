import { users } from "@db/schema";
import { config } from "@workers/config";
import { log } from "@workers/lib/log";
import { userObject } from "@workers/objects/client";
import { verifyPassword } from "@workers/services/password";
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { MESSAGES } from "~/shared/account-messages";
import { type AccountDeps, deliverLater, type Failure, invalidFields } from "./account-deps";
import { appLink, verificationEmail } from "./emails";
import { checkLimits, countSignInFailure, LIMITS, signInGate } from "./throttle";
import { consumeToken, issueToken, peekToken, revokeTokens } from "./tokens";
import { emailField, PASSWORD_MAX } from "./validation";

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

/**
 * Spends a verification link, given the password the account was created with (ADR 0351): the link proves the
 * mailbox, the password proves that whoever holds the mailbox also created the account. Someone who signed up with
 * another person's address cannot have that person verify it for them and keep the password they chose: its owner,
 * not knowing it, resets it instead (which verifies too). A wrong password spends nothing and counts as a failed
 * sign-in for that address.
 */
export async function verifyEmail(deps: AccountDeps, token: string, password: string): Promise<VerifyResult> {
  const now = deps.now ?? Date.now();
  const invalidLink = { ok: false, code: "invalid", error: MESSAGES.linkInvalid } as const;
  const link = await peekToken(deps.db, token, "verify_email", now);
  if (!link) return invalidLink;
  const account = await deps.db
    .select({ email: users.email, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, link.userId))
    .get();
  // A link sent to an address the account no longer has proves nothing.
  if (!account || account.email !== link.email) return invalidLink;
  if (account.passwordHash !== null) {
    const limited = await signInGate(deps, account.email);
    if (limited) return limited;
    const candidate = password.length > PASSWORD_MAX ? "" : password;
    if (candidate === "" || !(await verifyPassword(candidate, account.passwordHash))) {
      await countSignInFailure(deps, account.email);
      return { ok: false, code: "unauthenticated", error: MESSAGES.verifyWrongPassword };
    }
  }
  const spent = await consumeToken(deps.db, token, "verify_email", now);
  // Spent by a concurrent click meanwhile.
  if (!spent) return invalidLink;
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
