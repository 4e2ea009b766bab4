import { sessions, users } from "@db/schema";
import { activeKeyCount, revokeAllKeysStatement } from "@workers/services/api-keys";
import { endExportLinksStatements } from "@workers/services/mls/account-data";
import { hashPassword } from "@workers/services/password";
import { eq } from "drizzle-orm";
import { MESSAGES } from "~/shared/account-messages";
import { type AccountDeps, deliverLater, type Failure, invalidFields } from "./account-deps";
import { appLink, passwordResetEmail } from "./emails";
import { checkLimits, LIMITS } from "./throttle";
import { consumeToken, issueToken, revokeTokens } from "./tokens";
import { emailField, newPasswordField } from "./validation";
import { markVerified } from "./verification";

export type ResetRequestResult = { ok: true; message: string } | Failure<"email">;

/**
 * 'Forgot Password?': e-mails a one-hour link when the account exists. The
 * answer, its status and its timing are the same either way (the e-mail goes
 * out after the answer).
 */
export async function requestPasswordReset(deps: AccountDeps, input: { email: unknown }): Promise<ResetRequestResult> {
  if (typeof input.email !== "string" || input.email.trim() === "") {
    return {
      ok: false,
      code: "invalid",
      error: MESSAGES.resetNeedsEmail,
      fieldErrors: { email: MESSAGES.resetNeedsEmail },
    };
  }
  const parsed = emailField.safeParse(input.email);
  if (!parsed.success) return invalidFields({ email: parsed.error.issues[0]?.message });
  const email = parsed.data;

  const limited = await checkLimits(deps, LIMITS.reset, email);
  if (limited) return limited;

  deliverLater(deps, "password reset", async () => {
    const user = await deps.db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, email) });
    if (!user) return null;
    const token = await issueToken(
      deps.db,
      { userId: user.id, email: user.email, purpose: "reset_password" },
      deps.now ?? Date.now(),
    );
    return passwordResetEmail(user.email, user.name, appLink(deps.env.APP_ORIGIN, "/reset-password", token));
  });
  return { ok: true, message: MESSAGES.resetSent };
}

/** `revokedKeys`: how many API keys the reset revoked, when it revoked any. */
export type ResetResult = { ok: true; userId: string; revokedKeys?: number } | Failure<"password">;

/**
 * Spends a reset link: sets the new password, ends every session of the
 * user, revokes every API key and ends every export link in one atomic batch
 * (a reset is what someone does when the account may be in other hands: no
 * credential made before it keeps working; docs/decisions/0153-credentials-end-with-the-accounts-trust.md,
 * 0206-export-links-end-with-the-sessions.md).
 * The link proves the address, so an unverified account becomes verified.
 */
export async function resetPassword(
  deps: AccountDeps,
  input: { token: unknown; password: unknown },
): Promise<ResetResult> {
  const parsed = newPasswordField.safeParse(input.password);
  // Checked before the link is spent, so a typo does not burn it.
  if (!parsed.success) return invalidFields({ password: parsed.error.issues[0]?.message });
  const now = deps.now ?? Date.now();
  const token = typeof input.token === "string" ? input.token : "";
  const spent = await consumeToken(deps.db, token, "reset_password", now);
  if (!spent) return { ok: false, code: "invalid", error: MESSAGES.linkInvalid };
  const user = await deps.db.select({ email: users.email }).from(users).where(eq(users.id, spent.userId)).get();
  if (!user || user.email !== spent.email) return { ok: false, code: "invalid", error: MESSAGES.linkInvalid };

  const passwordHash = await hashPassword(parsed.data);
  const revokedKeys = await activeKeyCount(deps.db, spent.userId);
  await deps.db.batch([
    deps.db.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, spent.userId)),
    deps.db.delete(sessions).where(eq(sessions.userId, spent.userId)),
    revokeAllKeysStatement(deps.db, spent.userId, "password_reset", now),
    ...endExportLinksStatements(deps.db, spent.userId, now),
    revokeTokens(deps.db, spent.userId, "reset_password"),
  ]);
  await markVerified({ ...deps, now }, spent.userId);
  return revokedKeys > 0 ? { ok: true, userId: spent.userId, revokedKeys } : { ok: true, userId: spent.userId };
}
