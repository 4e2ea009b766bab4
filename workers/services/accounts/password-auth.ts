import { users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from "@workers/services/password";
import { createSession } from "@workers/services/sessions";
import { eq } from "drizzle-orm";
import { MESSAGES } from "~/shared/account-messages";
import { type AccountDeps, type Failure, invalidFields } from "./account-deps";
import { landingPath } from "./landing";
import { checkLimits, countSignInFailure, LIMITS, signInGate } from "./throttle";
import { fieldErrors, nameFromEmail, PASSWORD_MAX, signInSchema, signUpSchema } from "./validation";
import { grantOwedTrialCredits, sendVerification } from "./verification";

export type SignUpField = "name" | "email" | "password" | "acceptTerms";

export type SignUpResult =
  | { ok: true; userId: string; email: string; message: string }
  | { ok: false; code: "conflict"; error: string; emailInUse: true }
  | Failure<SignUpField>;

/**
 * Creates an unverified account and e-mails a verification link. No session:
 * e-mail sign-in stays refused until the address is verified.
 */
export async function signUp(
  deps: AccountDeps,
  input: Record<string, unknown>,
  redirectTo: string | null = null,
): Promise<SignUpResult> {
  const parsed = signUpSchema.safeParse(input);
  if (!parsed.success) return invalidFields(fieldErrors<SignUpField>(parsed.error));
  const { email, password } = parsed.data;
  const name = parsed.data.name || nameFromEmail(email);

  const limited = await checkLimits(deps, LIMITS.signUp, email);
  if (limited) return limited;

  const inUse = { ok: false, code: "conflict", error: MESSAGES.emailInUse, emailInUse: true } as const;
  const existing = await deps.db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
  if (existing) return inUse;

  const now = deps.now ?? Date.now();
  const id = randomToken();
  const inserted = await deps.db
    .insert(users)
    .values({ id, email, name, passwordHash: await hashPassword(password), createdAt: now, updatedAt: now })
    .onConflictDoNothing({ target: users.email })
    .returning({ id: users.id })
    .all();
  // Someone else took the address between the check and the insert.
  if (inserted.length === 0) return inUse;

  sendVerification(deps, { id, email, name }, redirectTo);
  return { ok: true, userId: id, email, message: MESSAGES.verificationSent };
}

export type SignInField = "email" | "password";

export type SignInResult =
  | { ok: true; userId: string; token: string; expiresAt: number; landing: string }
  | Failure<SignInField>;

/**
 * E-mail and password sign-in. An unknown address and a wrong password get
 * the same answer, status and work (a PBKDF2 run against a dummy hash).
 */
export async function signInWithPassword(
  deps: AccountDeps,
  input: Record<string, unknown>,
  opts: { redirectTo?: string | null; userAgent?: string | null } = {},
): Promise<SignInResult> {
  const parsed = signInSchema.safeParse(input);
  if (!parsed.success) return invalidFields(fieldErrors<SignInField>(parsed.error));
  const { email, password } = parsed.data;

  const limited = await signInGate(deps, email);
  if (limited) return limited;

  const invalid: Failure<SignInField> = { ok: false, code: "unauthenticated", error: MESSAGES.invalidCredentials };
  const user = await deps.db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, email) });
  // Longer than any password we accept: it cannot match, and hashing it would only cost CPU.
  const candidate = password.length > PASSWORD_MAX ? "" : password;
  const matches = await verifyPassword(candidate, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user?.passwordHash || !matches || candidate === "") {
    await countSignInFailure(deps, email);
    return invalid;
  }

  if (user.emailVerifiedAt === null) {
    return { ok: false, code: "forbidden", error: MESSAGES.verifyFirst, needsVerification: true };
  }

  const now = deps.now ?? Date.now();
  // Trial credits a failure after verification left owed are granted now.
  await grantOwedTrialCredits(deps, user).catch((err: unknown) => {
    log.warn("trial credits still owed", { userId: user.id, err });
  });
  if (needsRehash(user.passwordHash)) {
    await deps.db
      .update(users)
      .set({ passwordHash: await hashPassword(password), updatedAt: now })
      .where(eq(users.id, user.id));
  }
  const session = await createSession(deps.db, user.id, opts.userAgent ?? null, now);
  return {
    ok: true,
    userId: user.id,
    token: session.token,
    expiresAt: session.expiresAt,
    landing: landingPath(user, opts.redirectTo),
  };
}
