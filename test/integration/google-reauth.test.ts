import { env } from "cloudflare:workers";
import { sessions, subscriptions, users } from "@db/schema";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { db, makeUser } from "@test/support/factories";
import { allow, fakeStripe } from "@test/support/stripe";
import { createStripe } from "@workers/adapters/stripe";
import { randomToken, sha256Hex } from "@workers/lib/crypto";
import { signInWithGoogle } from "@workers/services/accounts/google";
import {
  consumeReauth,
  finishGoogleReauth,
  REAUTH_MESSAGES,
  REAUTH_PROOF_MS,
  type ReauthSession,
  startGoogleReauth,
} from "@workers/services/accounts/google-reauth";
import { deleteAccount } from "@workers/services/mls/account-data";
import { createSession } from "@workers/services/sessions";
import { eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

// Confirming an account deletion with Google instead of the password
// (docs/decisions/0112-account-deletion-and-export.md). A stand-in OpenID
// provider at GOOGLE_ISSUER_URL answers discovery, JWKS and the token
// endpoint with an ID token signed here, naming whoever the test says.
// The pages (/settings, /auth/google/callback) are driven in Chromium by
// test/e2e/reauth.e2e.ts and attacked by test/e2e/hostile/mls.cases.ts.

const ISSUER = env.GOOGLE_ISSUER_URL!;
const CLIENT_ID = env.GOOGLE_CLIENT_ID!;
const PASSWORD = "correct horse 42";

let signingKey: CryptoKeyPair;
let publicJwk: JsonWebKey;
/** The claims of the next ID token the token endpoint hands out. */
let nextClaims: Record<string, unknown> = {};
/** The nonce of the last authorization request: Google puts it in the ID token, as the stand-in does. */
let sentNonce: string | null = null;
let tokenCalls = 0;

const b64 = (value: object) => encodeBase64urlNoPadding(new TextEncoder().encode(JSON.stringify(value)));

async function idToken(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const body = `${b64({ alg: "RS256", kid: "key-1", typ: "JWT" })}.${b64({
    iss: ISSUER,
    aud: CLIENT_ID,
    iat: now,
    exp: now + 3600,
    email: "someone@example.test",
    email_verified: true,
    ...(sentNonce !== null ? { nonce: sentNonce } : {}),
    ...claims,
  })}`;
  const sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signingKey.privateKey, new TextEncoder().encode(body));
  return `${body}.${encodeBase64urlNoPadding(new Uint8Array(sig))}`;
}

beforeAll(async () => {
  signingKey = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  publicJwk = await crypto.subtle.exportKey("jwk", signingKey.publicKey);
});

beforeEach(() => {
  tokenCalls = 0;
  nextClaims = {};
  sentNonce = null;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== ISSUER) throw new Error(`unexpected fetch ${request.url}`);
    if (url.pathname === "/.well-known/openid-configuration")
      return Response.json({
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/authorize`,
        token_endpoint: `${ISSUER}/token`,
        jwks_uri: `${ISSUER}/jwks`,
      });
    if (url.pathname === "/jwks")
      return Response.json({ keys: [{ ...publicJwk, kid: "key-1", alg: "RS256", use: "sig" }] });
    if (url.pathname === "/token" && request.method === "POST") {
      tokenCalls++;
      return Response.json({
        access_token: "at",
        token_type: "Bearer",
        expires_in: 3600,
        id_token: await idToken(nextClaims),
      });
    }
    return new Response("not found", { status: 404 });
  });
});

/** A user linked to a Google subject (Google-only unless a password is given), signed in on one session. */
async function googleUser(opts: { password?: string } = {}) {
  const user = await makeUser(opts);
  const googleSub = `google-${randomToken(8)}`;
  await db.update(users).set({ googleSub }).where(eq(users.id, user.id));
  const { token } = await createSession(db, user.id, "vitest");
  const who: ReauthSession = { userId: user.id, sessionId: sha256Hex(token) };
  return { ...user, googleSub, token, who };
}

/** An active monthly subscription of `userId` (deletion must cancel it at Stripe); its id. */
async function activeSubscription(userId: string, at: number): Promise<string> {
  const id = `sub_${randomToken(6)}`;
  await db.insert(subscriptions).values({
    id,
    userId,
    customerId: "cus_1",
    planId: "popular",
    interval: "month",
    status: "active",
    createdAt: at,
    updatedAt: at,
  });
  return id;
}

const sessionRow = (id: string) => db.select().from(sessions).where(eq(sessions.id, id)).get();

/** Starts a confirmation for `who` and returns Google's answer for it (the callback request). */
async function leaveForGoogle(who: ReauthSession, now = Date.now()) {
  const started = await startGoogleReauth({ db, env, clock: () => now }, who, false);
  if (!started.ok) throw new Error(started.error);
  const state = new URL(started.url).searchParams.get("state")!;
  sentNonce = new URL(started.url).searchParams.get("nonce");
  const oauthCookie = started.cookie.split(";")[0]!;
  const callback = (overrides: { state?: string; cookie?: string } = {}) =>
    new Request(`http://localhost/auth/google/callback?code=c-${randomToken(4)}&state=${overrides.state ?? state}`, {
      headers: { Cookie: overrides.cookie ?? oauthCookie },
    });
  return { url: new URL(started.url), state, oauthCookie, callback };
}

async function confirmWithGoogle(who: ReauthSession, sub: string, now = Date.now()) {
  const trip = await leaveForGoogle(who, now);
  nextClaims = { sub, auth_time: Math.floor(now / 1000) };
  const outcome = await finishGoogleReauth({ db, env, clock: () => now }, trip.callback(), who, false);
  return { trip, outcome };
}

describe("confirming an account deletion with Google", () => {
  it("leaves for Google with max_age=0 and remembers the state on this session only; an account without Google is refused", async () => {
    const u = await googleUser();
    const trip = await leaveForGoogle(u.who);
    expect(trip.url.origin + trip.url.pathname).toBe(`${ISSUER}/authorize`);
    expect(trip.url.searchParams.get("max_age")).toBe("0");
    // auth_time comes only when Google's claims parameter asks for it.
    expect(JSON.parse(trip.url.searchParams.get("claims")!)).toEqual({ id_token: { auth_time: { essential: true } } });
    expect(trip.url.searchParams.get("nonce")).toMatch(/^[\w-]{43}$/);
    expect(trip.url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(trip.oauthCookie).toMatch(/^sw_oauth=[^.]+\.[^.]+\.reauth-delete\.$/);
    const row = await sessionRow(u.who.sessionId);
    expect(row?.reauthState).toBe(sha256Hex(trip.state));
    expect(row?.reauthAt).toBeNull();

    const plain = await makeUser({ password: PASSWORD });
    const { token } = await createSession(db, plain.id, "vitest");
    const refused = await startGoogleReauth(
      { db, env, clock: Date.now },
      { userId: plain.id, sessionId: sha256Hex(token) },
      false,
    );
    expect(refused).toEqual({ ok: false, code: "forbidden", error: REAUTH_MESSAGES.noGoogle });
    expect((await sessionRow(sha256Hex(token)))?.reauthState).toBeNull();
  });

  it("records a proof for the account's own Google subject; the state works once", async () => {
    const u = await googleUser();
    const now = Date.now();
    const { trip, outcome } = await confirmWithGoogle(u.who, u.googleSub, now);
    expect(outcome).toMatchObject({ ok: true, location: "/settings?confirm=delete" });
    expect(outcome.cookies[0]).toMatch(/^sw_oauth=; .*Max-Age=0/);
    expect(await sessionRow(u.who.sessionId)).toMatchObject({ reauthAt: now, reauthState: null });

    // The same state again (a replayed callback) is refused before Google is asked.
    const calls = tokenCalls;
    const replay = await finishGoogleReauth({ db, env, clock: () => now + 1000 }, trip.callback(), u.who, false);
    expect(replay).toMatchObject({ ok: false, code: "invalid", error: REAUTH_MESSAGES.expired });
    expect(tokenCalls).toBe(calls);
    expect((await sessionRow(u.who.sessionId))?.reauthAt).toBe(now);
  });

  it("refuses another Google account, and changes nothing", async () => {
    const u = await googleUser({ password: PASSWORD });
    const trip = await leaveForGoogle(u.who);
    nextClaims = { sub: `google-someone-else-${randomToken(4)}`, auth_time: Math.floor(Date.now() / 1000) };
    const outcome = await finishGoogleReauth({ db, env, clock: Date.now }, trip.callback(), u.who, false);
    expect(outcome).toMatchObject({ ok: false, code: "forbidden", error: REAUTH_MESSAGES.wrongAccount });
    expect(tokenCalls).toBe(1);
    expect((await sessionRow(u.who.sessionId))?.reauthAt).toBeNull();
    const { stripe, calls } = fakeStripe();
    const del = await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, u.id, {
      googleSessionId: u.who.sessionId,
    });
    expect(del).toEqual({ ok: false, code: "forbidden", error: REAUTH_MESSAGES.needProof });
    expect(calls).toEqual([]);
    expect((await db.select().from(users).where(eq(users.id, u.id)).get())?.deletedAt).toBeNull();
  });

  it("refuses a return with no session, to another session, with a forged state or cookie, or a stale Google sign-in", async () => {
    const u = await googleUser();
    const stranger = await googleUser();
    const trip = await leaveForGoogle(u.who);
    nextClaims = { sub: u.googleSub, auth_time: Math.floor(Date.now() / 1000) };
    const finish = (req: Request, who: ReauthSession | null, now = Date.now()) =>
      finishGoogleReauth({ db, env, clock: () => now }, req, who, false);

    expect(await finish(trip.callback(), null)).toMatchObject({ ok: false, code: "unauthenticated" });
    // The stranger holds the owner's cookie and Google's answer, but their session started nothing.
    expect(await finish(trip.callback(), stranger.who)).toMatchObject({ ok: false, code: "invalid" });
    expect(await finish(trip.callback({ state: "forged-state" }), u.who)).toMatchObject({
      ok: false,
      code: "invalid",
    });
    // A hand-made cookie whose state matches the URL: the session row knows no such state.
    expect(
      await finish(trip.callback({ state: "made-up", cookie: "sw_oauth=made-up.verifier.reauth-delete." }), u.who),
    ).toMatchObject({ ok: false, code: "invalid", error: REAUTH_MESSAGES.expired });
    // A sign-in cookie (no purpose) is not a confirmation.
    expect(await finish(trip.callback({ cookie: `sw_oauth=${trip.state}.verifier.` }), u.who)).toMatchObject({
      ok: false,
      code: "invalid",
    });
    // Started more than 10 minutes ago.
    expect(await finish(trip.callback(), u.who, Date.now() + 11 * 60 * 1000)).toMatchObject({
      ok: false,
      error: REAUTH_MESSAGES.expired,
    });
    expect(tokenCalls).toBe(0);
    // Google says the person last signed in an hour ago: it did not ask again.
    nextClaims = { sub: u.googleSub, auth_time: Math.floor(Date.now() / 1000) - 3600 };
    expect(await finish(trip.callback(), u.who)).toMatchObject({
      ok: false,
      code: "forbidden",
      error: REAUTH_MESSAGES.stale,
    });
    for (const who of [u.who, stranger.who]) expect((await sessionRow(who.sessionId))?.reauthAt).toBeNull();
    // Google names no auth_time (the client's session age claims setting is off): nothing says it asked again.
    nextClaims = { sub: u.googleSub };
    const reports = vi.spyOn(console, "error").mockImplementation(() => {});
    expect(await finish(trip.callback(), u.who)).toMatchObject({
      ok: false,
      code: "forbidden",
      error: REAUTH_MESSAGES.noAuthTime,
    });
    expect(reports.mock.calls.map((c) => String(c[0])).join("\n")).toContain("google sent no auth_time");
    reports.mockRestore();
    // An ID token whose nonce is not this request's (another trip's answer, replayed) is refused.
    nextClaims = { sub: u.googleSub, auth_time: Math.floor(Date.now() / 1000), nonce: "another-trips-nonce" };
    expect(await finish(trip.callback(), u.who)).toMatchObject({
      ok: false,
      code: "invalid",
      error: REAUTH_MESSAGES.failed,
    });
    for (const who of [u.who, stranger.who]) expect((await sessionRow(who.sessionId))?.reauthAt).toBeNull();
    // Still usable by its own session afterwards: the refusals changed nothing.
    nextClaims = { sub: u.googleSub, auth_time: Math.floor(Date.now() / 1000) };
    expect(await finish(trip.callback(), u.who)).toMatchObject({ ok: true });
  });

  it("deletes with a proof under 5 minutes old; an expired or used proof is refused and nothing changes", async () => {
    const { stripe, calls } = fakeStripe();
    const at = Date.now();

    // Expired: 5 minutes and 1 ms after Google confirmed.
    const late = await googleUser();
    await confirmWithGoogle(late.who, late.googleSub, at);
    const expired = await deleteAccount(
      { db, env, stripe, clock: () => at + REAUTH_PROOF_MS + 1, rateLimit: allow },
      late.id,
      { googleSessionId: late.who.sessionId },
    );
    expect(expired).toEqual({ ok: false, code: "forbidden", error: REAUTH_MESSAGES.needProof });
    expect(await db.select().from(users).where(eq(users.id, late.id)).get()).toMatchObject({
      email: late.email,
      deletedAt: null,
    });
    expect(await sessionRow(late.who.sessionId)).toBeDefined();

    // Used once already.
    const used = await googleUser();
    await confirmWithGoogle(used.who, used.googleSub, at);
    expect((await consumeReauth({ db, clock: () => at + 1000 }, used.who)).ok).toBe(true);
    expect((await consumeReauth({ db, clock: () => at + 2000 }, used.who)).ok).toBe(false);
    expect(
      await deleteAccount({ db, env, stripe, clock: () => at + 3000, rateLimit: allow }, used.id, {
        googleSessionId: used.who.sessionId,
      }),
    ).toMatchObject({ ok: false, code: "forbidden" });
    expect(calls).toEqual([]);

    // Fresh (4 min 59 s): a Google-only account with a subscription is deleted.
    const u = await googleUser();
    const subId = await activeSubscription(u.id, at);
    await confirmWithGoogle(u.who, u.googleSub, at);
    const res = await deleteAccount(
      { db, env, stripe, clock: () => at + REAUTH_PROOF_MS - 1000, rateLimit: allow },
      u.id,
      { googleSessionId: u.who.sessionId },
    );
    expect(res).toEqual({ ok: true });
    expect(calls).toEqual([`DELETE /v1/subscriptions/${subId}`]);
    const row = await db.select().from(users).where(eq(users.id, u.id)).get();
    expect(row?.deletedAt).not.toBeNull();
    expect(row?.googleSub).toBeNull();
    expect(await db.select().from(sessions).where(eq(sessions.userId, u.id)).all()).toEqual([]);
    // The Google account can sign up again as a new user.
    const again = await signInWithGoogle(
      { db, env },
      { sub: u.googleSub, email: u.email, emailVerified: true, name: null },
    );
    expect(again).toMatchObject({ ok: true, created: true });
    expect(again.ok && again.userId).not.toBe(u.id);
  });

  it("gives the proof back when Stripe refuses to cancel, so the owner can try again", async () => {
    const u = await googleUser();
    const at = Date.now();
    await activeSubscription(u.id, at);
    await confirmWithGoogle(u.who, u.googleSub, at);
    const failing = createStripe(
      { STRIPE_SECRET_KEY: "sk_test_fake", STRIPE_API_URL: "http://stripe.test" },
      async () => Response.json({ error: { type: "api_error", message: "down" } }, { status: 500 }),
    );
    const res = await deleteAccount({ db, env, stripe: failing, clock: () => at + 1000, rateLimit: allow }, u.id, {
      googleSessionId: u.who.sessionId,
    });
    expect(res).toMatchObject({ ok: false, code: "unavailable" });
    expect((await sessionRow(u.who.sessionId))?.reauthAt).toBe(at);
  });

  it("leaves the password path as it was: a password account still deletes with it, and Google proofs need a Google account", async () => {
    const { stripe } = fakeStripe();
    const plain = await makeUser({ password: PASSWORD });
    const { token } = await createSession(db, plain.id, "vitest");
    expect(
      await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, plain.id, {
        googleSessionId: sha256Hex(token),
      }),
    ).toEqual({ ok: false, code: "forbidden", error: REAUTH_MESSAGES.noGoogle });
    expect(
      await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, plain.id, { password: "wrong" }),
    ).toMatchObject({ ok: false, code: "invalid", fieldErrors: { password: "The password is not correct." } });
    expect(
      await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, plain.id, { password: PASSWORD }),
    ).toEqual({ ok: true });

    const googleOnly = await googleUser();
    expect(
      await deleteAccount({ db, env, stripe, clock: Date.now, rateLimit: allow }, googleOnly.id, { password: "x" }),
    ).toMatchObject({ ok: false, code: "forbidden" });
  });
});
