import { env } from "cloudflare:workers";
import { creditLedger, emailTokens, sessions, users } from "@db/schema";
import { accountDeps, tokenFrom, uniqueEmail } from "@test/support/accounts";
import { db, makeUser } from "@test/support/factories";
import { STATUS } from "@workers/http/result";
import { sha256Hex } from "@workers/lib/crypto";
import { RATE_LIMITED_MESSAGE } from "@workers/objects/rate-limiter";
import { userObject } from "@workers/objects/user-object";
import { signInWithPassword, signUp } from "@workers/services/accounts/password-auth";
import { requestPasswordReset, resetPassword } from "@workers/services/accounts/password-reset";
import { SIGN_IN_SLOWDOWN_MS } from "@workers/services/accounts/throttle";
import { grantAllOwedTrialCredits, resendVerification, verifyEmail } from "@workers/services/accounts/verification";
import { dummyPasswordHash } from "@workers/services/password";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { MESSAGES } from "~/shared/account-messages";

const PASSWORD = "correct horse battery";
const HOUR = 60 * 60 * 1000;
const TRIAL = Number(env.SIGNUP_CREDITS);

async function signUpUser(
  email = uniqueEmail(),
  extra: Record<string, unknown> = {},
  redirectTo: string | null = null,
) {
  const t = accountDeps();
  const result = await signUp(t.deps, { email, password: PASSWORD, acceptTerms: "on", ...extra }, redirectTo);
  await t.flush();
  return { ...t, result, email, token: tokenFrom(t.sent[0]) };
}

async function signUpAndVerify(email = uniqueEmail()) {
  const s = await signUpUser(email);
  const v = await verifyEmail(accountDeps().deps, s.token, PASSWORD);
  expect(v.ok).toBe(true);
  return s;
}

const userByEmail = (email: string) => db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, email) });

describe("sign-up", () => {
  it("creates an unverified user named after the e-mail and mails a single-use link whose hash alone is stored", async () => {
    const email = uniqueEmail("casey");
    const { result, sent, token } = await signUpUser(email.toUpperCase());
    expect(result).toMatchObject({ ok: true, email, message: MESSAGES.verificationSent });
    const user = await userByEmail(email);
    expect(user).toMatchObject({ emailVerifiedAt: null, credits: 0, plan: null, name: email.split("@")[0] });
    expect(user?.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.to).toBe(email);
    expect(sent[0]?.text).toContain(`${env.APP_ORIGIN}/verify-email?token=${token}`);
    const rows = await db.select().from(emailTokens).where(eq(emailTokens.userId, user!.id)).all();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.id).toBe(sha256Hex(token));
    expect(rows[0]?.id).not.toContain(token);
    expect(rows[0]!.expiresAt - rows[0]!.createdAt).toBe(24 * HOUR);
  });

  it("refuses bad input with field errors and a 400, without creating anyone", async () => {
    const email = uniqueEmail();
    const { deps } = accountDeps();
    const short = await signUp(deps, { email, password: "seven77", acceptTerms: "on" });
    expect(short).toMatchObject({
      ok: false,
      code: "invalid",
      fieldErrors: { password: "Password must be at least 8 characters." },
    });
    const long = await signUp(deps, { email, password: "x".repeat(129), acceptTerms: "on" });
    expect(long).toMatchObject({
      code: "invalid",
      fieldErrors: { password: "Password must be at most 128 characters." },
    });
    const terms = await signUp(deps, { email, password: PASSWORD });
    expect(terms).toMatchObject({
      code: "invalid",
      fieldErrors: { acceptTerms: expect.stringContaining("at least 18") },
    });
    const bad = await signUp(deps, { email: "not-an-email", password: PASSWORD, acceptTerms: "on" });
    expect(bad).toMatchObject({ code: "invalid", fieldErrors: { email: "Enter a valid email address." } });
    expect(await userByEmail(email)).toBeUndefined();
    // Exactly 128 characters is allowed.
    const max = await signUp(deps, { email, password: "y".repeat(128), acceptTerms: "on" });
    expect(max.ok).toBe(true);
  });

  it("answers a used address (in any letter case) with the spec's message and sends nothing", async () => {
    const { email } = await signUpUser();
    const again = accountDeps();
    const result = await signUp(again.deps, { email: email.toUpperCase(), password: PASSWORD, acceptTerms: "on" });
    await again.flush();
    expect(result).toEqual({ ok: false, code: "conflict", error: MESSAGES.emailInUse, emailInUse: true });
    expect(again.sent).toHaveLength(0);
  });
});

describe("e-mail sign-in", () => {
  it("refuses an unverified account with the exact message and creates no session", async () => {
    const { email } = await signUpUser();
    const result = await signInWithPassword(accountDeps().deps, { email, password: PASSWORD });
    expect(result).toEqual({
      ok: false,
      code: "forbidden",
      error: "Please verify your email before logging in.",
      needsVerification: true,
    });
    const user = await userByEmail(email);
    expect(await db.select().from(sessions).where(eq(sessions.userId, user!.id)).all()).toHaveLength(0);
  });

  it("gives an unknown address and a wrong password the same answer after the same work", async () => {
    const { email } = await signUpAndVerify();
    await dummyPasswordHash();
    const derive = vi.spyOn(crypto.subtle, "deriveBits");
    const wrong = await signInWithPassword(accountDeps().deps, { email, password: "not the password" });
    const unknown = await signInWithPassword(accountDeps().deps, { email: uniqueEmail(), password: PASSWORD });
    expect(wrong).toEqual({ ok: false, code: "unauthenticated", error: "Invalid email or password." });
    expect(unknown).toEqual(wrong);
    // One PBKDF2 run at the full cost on each path.
    const iterations = derive.mock.calls.map(([params]) => (params as Pbkdf2Params).iterations);
    expect(iterations).toEqual([100_000, 100_000]);
  });

  it("lands per docs/product.md (Accounts) and lets a remembered same-origin address win", async () => {
    const { email } = await signUpAndVerify();
    const withTrial = await signInWithPassword(accountDeps().deps, { email, password: PASSWORD });
    expect(withTrial).toMatchObject({ ok: true, landing: "/dashboard" });
    const back = await signInWithPassword(
      accountDeps().deps,
      { email, password: PASSWORD },
      { redirectTo: "/checkout?planId=popular" },
    );
    expect(back).toMatchObject({ ok: true, landing: "/checkout?planId=popular" });
    for (const evil of ["//evil.example/x", "https://evil.example", "/login?redirectTo=/x"]) {
      const r = await signInWithPassword(accountDeps().deps, { email, password: PASSWORD }, { redirectTo: evil });
      expect(r).toMatchObject({ ok: true, landing: "/dashboard" });
    }

    const broke = await makeUser({ password: PASSWORD });
    const r = await signInWithPassword(accountDeps().deps, { email: broke.email, password: PASSWORD });
    expect(r).toMatchObject({ ok: true, landing: "/plans" });
    // The session is stored hashed.
    if (!r.ok) throw new Error("sign-in failed");
    const row = await db
      .select()
      .from(sessions)
      .where(eq(sessions.id, sha256Hex(r.token)))
      .get();
    expect(row?.userId).toBe(broke.id);
  });
});

describe("e-mail verification", () => {
  it("accepts a link once, grants the free trial credits once, and refuses it the second time", async () => {
    const { email, token } = await signUpUser(uniqueEmail(), {}, "/checkout?planId=starter");
    const first = await verifyEmail(accountDeps().deps, token, PASSWORD);
    expect(first).toEqual({ ok: true, redirectTo: "/checkout?planId=starter" });
    const user = await userByEmail(email);
    expect(user?.emailVerifiedAt).not.toBeNull();
    expect(user?.signupCreditsGranted).toBe(1);
    expect(await userObject(env, user!.id).balance(user!.id)).toBe(TRIAL);

    const reused = await verifyEmail(accountDeps().deps, token, PASSWORD);
    expect(reused).toEqual({ ok: false, code: "invalid", error: MESSAGES.linkInvalid });

    const ledger = await db.select().from(creditLedger).where(eq(creditLedger.userId, user!.id)).all();
    expect(ledger).toEqual([
      expect.objectContaining({
        kind: "grant",
        amount: TRIAL,
        reason: "Free trial credits",
        // Once per verified e-mail address (docs/product.md), whatever account holds it.
        idempotencyKey: `signup:${email.toLowerCase()}`,
      }),
    ]);
  });

  it("refuses a link after 24 hours", async () => {
    const { email, token } = await signUpUser();
    const late = accountDeps({ now: Date.now() + 24 * HOUR + 1000 });
    expect(await verifyEmail(late.deps, token, PASSWORD)).toMatchObject({ ok: false, error: MESSAGES.linkInvalid });
    expect((await userByEmail(email))?.emailVerifiedAt).toBeNull();
  });

  it("refuses made-up and malformed tokens", async () => {
    for (const token of ["", "abc", "a".repeat(32), "<script>"]) {
      expect(await verifyEmail(accountDeps().deps, token, PASSWORD)).toMatchObject({ ok: false, code: "invalid" });
    }
  });

  it("asks for the password the account was created with: a wrong one spends nothing and verifies nothing (ADR 0351)", async () => {
    const { email, token } = await signUpUser();
    for (const wrong of ["", "not the password at all", "x".repeat(500)]) {
      expect(await verifyEmail(accountDeps().deps, token, wrong)).toEqual({
        ok: false,
        code: "unauthenticated",
        error: MESSAGES.verifyWrongPassword,
      });
    }
    expect((await userByEmail(email))?.emailVerifiedAt).toBeNull();
    // The link still works with the right one.
    expect((await verifyEmail(accountDeps().deps, token, PASSWORD)).ok).toBe(true);
    expect((await userByEmail(email))?.emailVerifiedAt).not.toBeNull();
  });

  it("someone who signed up with another person's address cannot keep their password through the owner's click", async () => {
    // The squatter signs up; the owner, who never chose that password, cannot verify with the link alone.
    const { email, token } = await signUpUser();
    expect(await verifyEmail(accountDeps().deps, token, "the owner's own guess")).toMatchObject({ ok: false });
    expect(await signInWithPassword(accountDeps().deps, { email, password: PASSWORD })).toMatchObject({
      ok: false,
      error: MESSAGES.verifyFirst,
    });
    // The owner resets the password instead: that verifies the address, and the squatter's password stops working.
    const t = accountDeps();
    await requestPasswordReset(t.deps, { email });
    await t.flush();
    expect(
      (await resetPassword(accountDeps().deps, { token: tokenFrom(t.sent[0]), password: "the owner's new password" }))
        .ok,
    ).toBe(true);
    expect((await userByEmail(email))?.emailVerifiedAt).not.toBeNull();
    expect(await signInWithPassword(accountDeps().deps, { email, password: PASSWORD })).toMatchObject({ ok: false });
  });

  it("resends a link only to unverified accounts, with one answer for everyone", async () => {
    const unverified = await signUpUser();
    const verified = await signUpAndVerify();
    const answers = [];
    const mails = [];
    for (const email of [unverified.email, verified.email, uniqueEmail()]) {
      const t = accountDeps();
      answers.push(await resendVerification(t.deps, { email }));
      await t.flush();
      mails.push(t.sent.length);
    }
    expect(answers).toEqual(Array(3).fill({ ok: true, message: MESSAGES.verificationSent }));
    expect(mails).toEqual([1, 0, 0]);
    // Verifying through the second link does not grant the trial again.
    const t = accountDeps();
    await resendVerification(t.deps, { email: unverified.email });
    await t.flush();
    expect((await verifyEmail(accountDeps().deps, tokenFrom(t.sent[0]), PASSWORD)).ok).toBe(true);
    const user = await userByEmail(unverified.email);
    expect(await userObject(env, user!.id).balance(user!.id)).toBe(TRIAL);
  });
});

describe("password reset", () => {
  it("answers the same whether or not the account exists, and mails only a real account", async () => {
    const { email } = await signUpAndVerify();
    const known = accountDeps();
    const unknown = accountDeps();
    const a = await requestPasswordReset(known.deps, { email });
    const b = await requestPasswordReset(unknown.deps, { email: uniqueEmail() });
    await Promise.all([known.flush(), unknown.flush()]);
    expect(a).toEqual({ ok: true, message: "Password reset email sent!" });
    expect(b).toEqual(a);
    expect(known.sent).toHaveLength(1);
    expect(known.sent[0]?.text).toContain(`${env.APP_ORIGIN}/reset-password?token=`);
    expect(unknown.sent).toHaveLength(0);
  });

  it("asks for the e-mail when the field is empty", async () => {
    const r = await requestPasswordReset(accountDeps().deps, { email: "  " });
    expect(r).toMatchObject({ ok: false, code: "invalid", error: "Please Enter email address above." });
  });

  it("sets the new password, ends every session, and refuses the link a second time", async () => {
    const { email } = await signUpAndVerify();
    const s1 = await signInWithPassword(accountDeps().deps, { email, password: PASSWORD });
    const s2 = await signInWithPassword(accountDeps().deps, { email, password: PASSWORD });
    expect(s1.ok && s2.ok).toBe(true);
    const user = await userByEmail(email);
    expect(await db.select().from(sessions).where(eq(sessions.userId, user!.id)).all()).toHaveLength(2);

    const t = accountDeps();
    await requestPasswordReset(t.deps, { email });
    await t.flush();
    const token = tokenFrom(t.sent[0]);
    // A password that breaks the rules does not spend the link.
    expect(await resetPassword(accountDeps().deps, { token, password: "short" })).toMatchObject({
      ok: false,
      code: "invalid",
      fieldErrors: { password: "Password must be at least 8 characters." },
    });
    expect(await resetPassword(accountDeps().deps, { token, password: "a brand new secret" })).toEqual({
      ok: true,
      userId: user!.id,
    });
    expect(await db.select().from(sessions).where(eq(sessions.userId, user!.id)).all()).toHaveLength(0);
    expect(await signInWithPassword(accountDeps().deps, { email, password: PASSWORD })).toMatchObject({
      code: "unauthenticated",
    });
    expect(await signInWithPassword(accountDeps().deps, { email, password: "a brand new secret" })).toMatchObject({
      ok: true,
    });
    expect(await resetPassword(accountDeps().deps, { token, password: "yet another secret" })).toEqual({
      ok: false,
      code: "invalid",
      error: MESSAGES.linkInvalid,
    });
  });

  it("refuses a link after one hour", async () => {
    const { email } = await signUpAndVerify();
    const t = accountDeps();
    await requestPasswordReset(t.deps, { email });
    await t.flush();
    const late = accountDeps({ now: Date.now() + HOUR + 1000 });
    expect(await resetPassword(late.deps, { token: tokenFrom(t.sent[0]), password: "a brand new secret" })).toEqual({
      ok: false,
      code: "invalid",
      error: MESSAGES.linkInvalid,
    });
  });

  it("verifies an unverified account, since the link proves the address", async () => {
    const { email } = await signUpUser();
    const t = accountDeps();
    await requestPasswordReset(t.deps, { email });
    await t.flush();
    await resetPassword(accountDeps().deps, { token: tokenFrom(t.sent[0]), password: "a brand new secret" });
    const user = await userByEmail(email);
    expect(user?.emailVerifiedAt).not.toBeNull();
    expect(await userObject(env, user!.id).balance(user!.id)).toBe(TRIAL);
  });
});

describe("rate limits", () => {
  it("slows guessing at one address from anywhere, but never locks out the right password", async () => {
    const { email } = await signUpAndVerify();
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const results = [];
    for (let i = 0; i < 11; i++) {
      results.push(await signInWithPassword(accountDeps({ sleep }).deps, { email, password: "wrong password" }));
    }
    // Each guess came from another IP: all answered "invalid", the 11th after a wait.
    expect(results.every((r) => !r.ok && r.code === "unauthenticated")).toBe(true);
    expect(waits).toEqual([SIGN_IN_SLOWDOWN_MS]);
    // The owner, from their own IP, still signs in (after the same wait).
    expect(await signInWithPassword(accountDeps({ sleep }).deps, { email, password: PASSWORD })).toMatchObject({
      ok: true,
    });
    expect(waits).toEqual([SIGN_IN_SLOWDOWN_MS, SIGN_IN_SLOWDOWN_MS]);
  });

  it("refuses one client after 10 failures at one address, and only that client", async () => {
    const { email } = await signUpAndVerify();
    const guesser = accountDeps({ sleep: async () => {} }).deps;
    const results = [];
    for (let i = 0; i < 11; i++) results.push(await signInWithPassword(guesser, { email, password: "wrong password" }));
    expect(results.slice(0, 10).every((r) => !r.ok && r.code === "unauthenticated")).toBe(true);
    expect(results[10]).toMatchObject({ ok: false, code: "rate_limited", error: RATE_LIMITED_MESSAGE });
    expect(results[10]!.ok === false && results[10]!.retryAfterSeconds).toBeGreaterThan(0);
    // That client is refused even with the right password until the window passes...
    expect(await signInWithPassword(guesser, { email, password: PASSWORD })).toMatchObject({ code: "rate_limited" });
    // ...while the owner elsewhere is not.
    const owner = accountDeps({ sleep: async () => {} }).deps;
    expect(await signInWithPassword(owner, { email, password: PASSWORD })).toMatchObject({ ok: true });
  });

  it("answers 429 after 20 reset requests from one IP, whatever the address", async () => {
    const { deps } = accountDeps();
    const results = [];
    for (let i = 0; i < 21; i++) results.push(await requestPasswordReset(deps, { email: uniqueEmail() }));
    expect(results.slice(0, 20).every((r) => r.ok)).toBe(true);
    expect(results[20]).toMatchObject({ ok: false, code: "rate_limited", error: RATE_LIMITED_MESSAGE });
    expect(results[20]!.ok === false && results[20]!.retryAfterSeconds).toBeGreaterThan(0);
  });

  it("limits sign-up and resend per address", async () => {
    const { email } = await signUpUser();
    const signups = [];
    for (let i = 0; i < 6; i++) {
      signups.push(await signUp(accountDeps().deps, { email, password: PASSWORD, acceptTerms: "on" }));
    }
    // The first call above was the real sign-up, so four more are answered before the limit.
    expect(signups.map((r) => (r.ok ? 200 : STATUS[r.code]))).toEqual([409, 409, 409, 409, 429, 429]);
    const resends = [];
    for (let i = 0; i < 6; i++) resends.push(await resendVerification(accountDeps().deps, { email }));
    expect(resends.map((r) => r.ok)).toEqual([true, true, true, true, true, false]);
    expect(resends[5]).toMatchObject({ code: "rate_limited", error: RATE_LIMITED_MESSAGE });
  });
});

describe("users table", () => {
  it("keeps one account per address", async () => {
    const { email } = await signUpUser();
    await expect(
      db.insert(users).values({ id: "dup", email, name: "x", createdAt: 0, updatedAt: 0 }).run(),
    ).rejects.toThrow();
  });
});

describe("trial credits owed after a failure right after verification", () => {
  it("verification still succeeds, and the next sign-in (or the daily sweep) grants them once", async () => {
    const { email, token } = await signUpUser();
    // The user's Durable Object fails right after the e-mail is marked verified.
    const broken = {
      ...env,
      USER_OBJECT: {
        idFromName: (name: string) => env.USER_OBJECT.idFromName(name),
        get: () => ({
          grantSignupCredits: () => Promise.reject(new Error("object unavailable")),
        }),
      },
    } as unknown as Env;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    expect(await verifyEmail(accountDeps({ env: broken }).deps, token, PASSWORD)).toMatchObject({ ok: true });
    warn.mockRestore();
    const user = (await db.query.users.findFirst({ where: eq(users.email, email) }))!;
    expect(user.emailVerifiedAt).not.toBeNull();
    expect(await userObject(env, user.id).balance(user.id)).toBe(0);

    expect(await signInWithPassword(accountDeps().deps, { email, password: PASSWORD })).toMatchObject({ ok: true });
    expect(await userObject(env, user.id).balance(user.id)).toBe(TRIAL);
    // A second sign-in, and the sweep, grant nothing more.
    await signInWithPassword(accountDeps().deps, { email, password: PASSWORD });
    expect(await grantAllOwedTrialCredits({ env, db })).toBeGreaterThanOrEqual(0);
    expect(await userObject(env, user.id).balance(user.id)).toBe(TRIAL);
  });

  it("the daily sweep grants what is owed without a sign-in", async () => {
    const { email, token } = await signUpUser();
    const broken = {
      ...env,
      USER_OBJECT: {
        idFromName: (name: string) => env.USER_OBJECT.idFromName(name),
        get: () => ({ grantSignupCredits: () => Promise.reject(new Error("object unavailable")) }),
      },
    } as unknown as Env;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    await verifyEmail(accountDeps({ env: broken }).deps, token, PASSWORD);
    warn.mockRestore();
    const user = (await db.query.users.findFirst({ where: eq(users.email, email) }))!;
    await grantAllOwedTrialCredits({ env, db }, 10_000);
    expect(await userObject(env, user.id).balance(user.id)).toBe(TRIAL);
  });
});
