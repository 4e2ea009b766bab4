import { env } from "cloudflare:workers";
import { sessions } from "@db/schema";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { accountDeps, uniqueEmail } from "@test/support/accounts";
import { db, makeUser } from "@test/support/factories";
import { googleOAuth, nonceFor, verifyIdToken } from "@workers/adapters/google-oauth";
import { userObject } from "@workers/objects/user-object";
import { signInWithGoogle } from "@workers/services/accounts/google";
import { signUp } from "@workers/services/accounts/password-auth";
import { grantAllOwedTrialCredits } from "@workers/services/accounts/verification";
import { eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { MESSAGES } from "~/shared/account-messages";

// A stand-in OpenID provider at GOOGLE_ISSUER_URL (http://oauth.test in the
// test configuration): discovery, JWKS and a token endpoint that returns an
// ID token signed with a key made here.
const ISSUER = env.GOOGLE_ISSUER_URL!;
const CLIENT_ID = env.GOOGLE_CLIENT_ID!;
const discovery = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/authorize`,
  token_endpoint: `${ISSUER}/token`,
  jwks_uri: `${ISSUER}/jwks`,
};

let signingKey: CryptoKeyPair;
let otherKey: CryptoKeyPair;
let publicJwk: JsonWebKey;

async function rsaKey(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
}

const b64 = (value: object) => encodeBase64urlNoPadding(new TextEncoder().encode(JSON.stringify(value)));

async function idToken(claims: Record<string, unknown> = {}, key = signingKey.privateKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const body = `${b64({ alg: "RS256", kid: "key-1", typ: "JWT" })}.${b64({
    iss: ISSUER,
    aud: CLIENT_ID,
    iat: now,
    exp: now + 3600,
    sub: "google-sub-1",
    email: "someone@example.test",
    email_verified: true,
    name: "Some One",
    ...claims,
  })}`;
  const sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(body));
  return `${body}.${encodeBase64urlNoPadding(new Uint8Array(sig))}`;
}

let tokenRequests: { body: URLSearchParams; authorization: string | null }[] = [];
let nextIdToken = "";

beforeAll(async () => {
  signingKey = await rsaKey();
  otherKey = await rsaKey();
  publicJwk = await crypto.subtle.exportKey("jwk", signingKey.publicKey);
});

beforeEach(() => {
  tokenRequests = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== ISSUER) throw new Error(`unexpected fetch ${request.url}`);
    if (url.pathname === "/.well-known/openid-configuration") return Response.json(discovery);
    if (url.pathname === "/jwks")
      return Response.json({ keys: [{ ...publicJwk, kid: "key-1", alg: "RS256", use: "sig" }] });
    if (url.pathname === "/token" && request.method === "POST") {
      tokenRequests.push({
        body: new URLSearchParams(await request.text()),
        authorization: request.headers.get("Authorization"),
      });
      return Response.json({ access_token: "at", token_type: "Bearer", expires_in: 3600, id_token: nextIdToken });
    }
    return new Response("not found", { status: 404 });
  });
});

describe("the Google OAuth adapter", () => {
  it("starts an authorization code flow with PKCE (S256), state and our callback", async () => {
    const { url, state, codeVerifier } = await googleOAuth(env).start();
    expect(url.origin + url.pathname).toBe(`${ISSUER}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: CLIENT_ID,
      redirect_uri: `${env.APP_ORIGIN}/auth/google/callback`,
      state,
      code_challenge_method: "S256",
      scope: "openid email profile",
    });
    expect(url.searchParams.get("code_challenge")).not.toBe(codeVerifier);
    // Google's parameter table marks nonce required; it is the verifier's digest, never the verifier or challenge.
    expect(url.searchParams.get("nonce")).toBe(await nonceFor(codeVerifier));
    expect(url.searchParams.get("nonce")).not.toBe(url.searchParams.get("code_challenge"));
    expect(state.length).toBeGreaterThanOrEqual(32);
  });

  it("exchanges the code with the verifier and the client secret and returns the verified identity", async () => {
    nextIdToken = await idToken({ email: "Mixed.Case@Example.test", nonce: await nonceFor("the-verifier") });
    const identity = await googleOAuth(env).finish("the-code", "the-verifier");
    expect(identity).toEqual({
      sub: "google-sub-1",
      email: "mixed.case@example.test",
      emailVerified: true,
      name: "Some One",
    });
    expect(tokenRequests).toHaveLength(1);
    expect(Object.fromEntries(tokenRequests[0]!.body)).toMatchObject({
      grant_type: "authorization_code",
      code: "the-code",
      code_verifier: "the-verifier",
    });
    expect(tokenRequests[0]!.authorization).toBe(`Basic ${btoa(`${CLIENT_ID}:${env.GOOGLE_CLIENT_SECRET}`)}`);
  });

  it("refuses ID tokens that are forged, for another client, from another issuer or expired", async () => {
    const check = (token: string) => verifyIdToken(token, { discovery, clientId: CLIENT_ID });
    await expect(check(await idToken())).resolves.toMatchObject({ sub: "google-sub-1" });
    await expect(check(await idToken({}, otherKey.privateKey))).rejects.toThrow("signature");
    const [h, , s] = (await idToken()).split(".");
    await expect(check(`${h}.${b64({ sub: "someone-else", email: "x@example.test" })}.${s}`)).rejects.toThrow(
      "signature",
    );
    await expect(check(await idToken({ aud: "another-client" }))).rejects.toThrow("audience");
    await expect(check(await idToken({ iss: "https://evil.example" }))).rejects.toThrow("issuer");
    await expect(check(await idToken({ exp: Math.floor(Date.now() / 1000) - 3600 }))).rejects.toThrow("expired");
    await expect(check("not.a.jwt")).rejects.toThrow();
  });

  it("refuses an ID token without the request's nonce: another sign-in's token, or one with none", async () => {
    for (const claims of [{ nonce: await nonceFor("another-verifier") }, {}]) {
      nextIdToken = await idToken(claims);
      await expect(googleOAuth(env).finish("the-code", "the-verifier")).rejects.toThrow("nonce");
    }
  });
});

const identity = (email: string, emailVerified = true) => ({
  sub: `sub-${crypto.randomUUID()}`,
  email,
  emailVerified,
  name: "Goo Gle",
});

describe("signing in with Google", () => {
  it("creates a verified user with no plan, no credits and no password on the first sign-in, landing on /plans", async () => {
    const who = identity(uniqueEmail("g"));
    const first = await signInWithGoogle({ db, env }, who);
    expect(first).toMatchObject({ ok: true, created: true, landing: "/plans" });
    const user = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.googleSub, who.sub) });
    expect(user).toMatchObject({ email: who.email, name: "Goo Gle", plan: null, credits: 0, passwordHash: null });
    expect(user?.emailVerifiedAt).not.toBeNull();
    expect(await userObject(env, user!.id).balance(user!.id)).toBe(0);
    // Nor later: the daily sweep that grants e-mail sign-ups their trial credits passes a Google account by.
    await grantAllOwedTrialCredits({ db, env });
    expect(await userObject(env, user!.id).balance(user!.id)).toBe(0);

    const again = await signInWithGoogle({ db, env }, who, { redirectTo: null });
    expect(again).toMatchObject({ ok: true, created: false, landing: "/dashboard", userId: user!.id });
    const back = await signInWithGoogle({ db, env }, who, { redirectTo: "/checkout?planId=small" });
    expect(back).toMatchObject({ landing: "/checkout?planId=small" });
  });

  it("refuses an address Google has not verified", async () => {
    const who = identity(uniqueEmail("g"), false);
    expect(await signInWithGoogle({ db, env }, who)).toEqual({
      ok: false,
      code: "forbidden",
      reason: "email-unverified",
      error: MESSAGES.googleEmailUnverified,
    });
    expect(await db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, who.email) })).toBeUndefined();
  });

  it("links a verified e-mail account and keeps its password", async () => {
    const existing = await makeUser({ password: "password one" });
    const who = identity(existing.email);
    expect(await signInWithGoogle({ db, env }, who)).toMatchObject({ ok: true, created: false, userId: existing.id });
    const user = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, existing.id) });
    expect(user?.googleSub).toBe(who.sub);
    expect(user?.passwordHash).not.toBeNull();
    // Another Google account cannot take it over.
    expect(await signInWithGoogle({ db, env }, identity(existing.email))).toMatchObject({
      ok: false,
      reason: "linked-elsewhere",
    });
  });

  it("links an unverified sign-up, dropping the unproven password and sessions, and grants the trial once", async () => {
    const email = uniqueEmail("g");
    const t = accountDeps();
    await signUp(t.deps, { email, password: "set by whoever", acceptTerms: "on" });
    await t.flush();
    const before = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, email) });
    await db
      .insert(sessions)
      .values({ id: "stale-session", userId: before!.id, expiresAt: Date.now() + 60_000, createdAt: 0 });

    const result = await signInWithGoogle({ db, env }, identity(email));
    expect(result).toMatchObject({ ok: true, created: false, userId: before!.id });
    const after = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, before!.id) });
    expect(after?.passwordHash).toBeNull();
    expect(after?.emailVerifiedAt).not.toBeNull();
    expect(await db.select().from(sessions).where(eq(sessions.id, "stale-session")).get()).toBeUndefined();
    expect(await userObject(env, before!.id).balance(before!.id)).toBe(Number(env.SIGNUP_CREDITS));
  });
});
