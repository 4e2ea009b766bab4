import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  CodeChallengeMethod,
  generateCodeVerifier,
  generateState,
  OAuth2Client,
  OAuth2RequestError,
  type OAuth2Tokens,
} from "arctic";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOAuthEmulator } from "../../emulators/oauth.ts";
import {
  GOOGLE_ISSUER,
  type GoogleOAuthConfig,
  googleOAuth,
  OAuthError,
  verifyIdToken,
} from "../../workers/adapters/google-oauth.ts";

// Google sign-in as Google's own documents show it (test/contract/fixtures/google/google-oidc.json, each part naming
// the page it was transcribed from): Google's sample ID token replayed through our production verifier, then the
// sign-in emulator (emulators/oauth.ts) driven the way the product drives it (arctic's OAuth2Client, the adapter
// workers/adapters/google-oauth.ts) and its answers held against the samples: fields, types, formats and errors.

interface Fixture {
  _sources: Record<string, string>;
  authorizationRequest: { url: string; required: string[]; promptValues: string[] };
  authorizationResponse: { code: string; error: string };
  authorizationErrors: { userFacing: string[] };
  tokenResponse: { answer: Record<string, unknown>; fields: Record<string, string>; tokenType: string };
  idToken: {
    payload: Record<string, unknown>;
    issuers: string[];
    always: string[];
    claims: Record<string, string>;
    claimsNote: string;
  };
  discovery: { document: Record<string, unknown> };
  tokenErrors: {
    example: { status: number; answer: Record<string, unknown> };
    codes: Record<string, { status: number }>;
  };
}

const google = JSON.parse(
  readFileSync(join(import.meta.dirname, "fixtures/google/google-oidc.json"), "utf8"),
) as Fixture;

const CLIENT_ID = "424911365001.apps.googleusercontent.com";
const CLIENT_SECRET = "contract-secret";
const APP_ORIGIN = "http://app.test";
const REDIRECT_URI = `${APP_ORIGIN}/auth/google/callback`;

const b64url = (v: Buffer | string) => Buffer.from(v).toString("base64url");
const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};
const close = (s: Server | undefined) => new Promise((r) => (s ? s.close(r) : r(null)));

describe("Google's documents, self-consistent", () => {
  it("every part names its source", () => {
    expect(Object.keys(google._sources)).toEqual(["openid-connect", "web-server", "devices", "transcribed"]);
    for (const url of Object.values(google._sources).slice(0, 3))
      expect(url).toMatch(/^https:\/\/developers\.google\.com\//);
  });

  it("the sample token answer has the documented fields and types, token_type Bearer", () => {
    for (const [k, v] of Object.entries(google.tokenResponse.answer))
      expect(typeof v, k).toBe(google.tokenResponse.fields[k]);
    expect(google.tokenResponse.answer.token_type).toBe(google.tokenResponse.tokenType);
  });

  it("the sample ID token has every always-present claim, with the table's types", () => {
    const { payload, always, claims, issuers } = google.idToken;
    for (const k of always) expect(payload, k).toHaveProperty(k);
    for (const [k, v] of Object.entries(payload)) if (k !== "email_verified") expect(typeof v, k).toBe(claims[k]);
    expect(issuers).toContain(payload.iss);
    expect(payload.sub).toMatch(/^\d+$/);
  });
});

describe("Google's sample ID token, replayed through our verifier", () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: "jwk" }), kid: "google-sample", alg: "RS256", use: "sig" };
  let keys: Server;
  let jwksUri = "";

  beforeAll(async () => {
    keys = createServer((_req, res) =>
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ keys: [jwk] })),
    );
    jwksUri = `${await listen(keys)}/oauth2/v3/certs`;
  });
  afterAll(() => close(keys));

  /** Google's sample payload, moved to now (its lifetime kept) and signed RS256 as Google signs. */
  function signed(changes: Record<string, unknown> = {}, drop: string[] = []): string {
    const sample = google.idToken.payload as { iat: number; exp: number };
    const shift = Math.floor(Date.now() / 1000) - sample.iat;
    const payload: Record<string, unknown> = {
      ...sample,
      iat: sample.iat + shift,
      exp: sample.exp + shift,
      ...changes,
    };
    for (const k of drop) delete payload[k];
    const head = `${b64url(JSON.stringify({ alg: "RS256", kid: jwk.kid, typ: "JWT" }))}.${b64url(JSON.stringify(payload))}`;
    return `${head}.${b64url(sign("sha256", Buffer.from(head), privateKey))}`;
  }
  const discovery = () => ({
    ...(google.discovery.document as { issuer: string; authorization_endpoint: string; token_endpoint: string }),
    jwks_uri: jwksUri,
  });
  const clientId = String(google.idToken.payload.aud);

  it('reads sub, email and the string "true" of email_verified as Google\'s example writes them', async () => {
    expect(discovery().issuer).toBe(GOOGLE_ISSUER);
    expect(await verifyIdToken(signed(), { discovery: discovery(), clientId })).toEqual({
      sub: "10769150350006150715113082367",
      email: "jsmith@example.com",
      emailVerified: true,
      name: null,
    });
  });

  it("takes both issuers Google documents", async () => {
    for (const iss of google.idToken.issuers)
      expect((await verifyIdToken(signed({ iss }), { discovery: discovery(), clientId })).sub).toMatch(/^\d+$/);
  });

  it("reads email_verified false (boolean or string) as unverified", async () => {
    for (const v of [false, "false"])
      expect(
        (await verifyIdToken(signed({ email_verified: v }), { discovery: discovery(), clientId })).emailVerified,
      ).toBe(false);
  });

  it("refuses another audience, an expired token, and a token without the email claim (no email scope)", async () => {
    const check = (t: string) => verifyIdToken(t, { discovery: discovery(), clientId });
    await expect(check(signed({ aud: "someone-else.apps.googleusercontent.com" }))).rejects.toThrow(OAuthError);
    await expect(check(signed({ exp: Math.floor(Date.now() / 1000) - 3600 }))).rejects.toThrow(/expired/);
    await expect(check(signed({}, ["email", "email_verified"]))).rejects.toThrow(/no email/);
    await expect(check(signed({ iss: "https://accounts.example.com" }))).rejects.toThrow(/issuer/);
  });
});

describe("the sign-in emulator answers as Google's documents do", () => {
  let emulator: Server;
  let base = "";
  let discovery: Record<string, unknown> = {};
  const env = (): GoogleOAuthConfig => ({
    GOOGLE_CLIENT_ID: CLIENT_ID,
    GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
    GOOGLE_ISSUER_URL: base,
    APP_ORIGIN,
  });
  const arctic = () => new OAuth2Client(CLIENT_ID, CLIENT_SECRET, REDIRECT_URI);

  beforeAll(async () => {
    emulator = await startOAuthEmulator({ port: 0, redirectUris: [REDIRECT_URI] });
    base = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`;
    discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  });
  afterAll(() => close(emulator));

  /** The product's authorization URL, then the consent page submitted as a person would. */
  async function consent(
    person: { email: string; name?: string; verified?: boolean } | "cancel",
    opts: { reauth?: boolean; extra?: Record<string, string>; drop?: string[] } = {},
  ): Promise<{ url: URL; back: URL; codeVerifier: string; state: string }> {
    const started = await googleOAuth(env()).start({ reauth: opts.reauth });
    const url = new URL(started.url);
    for (const [k, v] of Object.entries(opts.extra ?? {})) url.searchParams.set(k, v);
    for (const k of opts.drop ?? []) url.searchParams.delete(k);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="login_email"');
    const submit = new URL(url);
    if (person === "cancel") submit.searchParams.set("login_cancel", "1");
    else {
      submit.searchParams.set("login_email", person.email);
      if (person.name) submit.searchParams.set("login_name", person.name);
      if (person.verified !== false) submit.searchParams.set("login_email_verified", "1");
    }
    const res = await fetch(submit, { redirect: "manual" });
    expect(res.status).toBe(302);
    return { ...started, url, back: new URL(res.headers.get("location") ?? "") };
  }

  it("publishes Google's discovery fields, at its own addresses", () => {
    const doc = google.discovery.document;
    // Not emulated, so not announced: the device flow, the userinfo endpoint, revocation (the app uses none).
    const notEmulated = ["device_authorization_endpoint", "userinfo_endpoint", "revocation_endpoint"];
    expect(Object.keys(discovery).sort()).toEqual(
      Object.keys(doc)
        .filter((k) => !notEmulated.includes(k))
        .sort(),
    );
    for (const [k, v] of Object.entries(discovery)) {
      if (typeof v === "string") expect(v, k).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
      else for (const item of v as string[]) expect(doc[k] as string[], k).toContain(item);
    }
    for (const k of [
      "scopes_supported",
      "token_endpoint_auth_methods_supported",
      "claims_supported",
      "code_challenge_methods_supported",
    ])
      expect(discovery[k], k).toEqual(doc[k]);
    expect(discovery.issuer).toBe(base);
  });

  it("takes the product's authorization request with Google's parameters, and answers as Google's example", async () => {
    const { url, back, state } = await consent({ email: "jsmith@example.com", name: "Jane Smith" });
    for (const p of google.authorizationRequest.required) expect(url.searchParams.get(p), p).toBeTruthy();
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(url.searchParams.get("scope")?.split(" ")[0]).toBe("openid");
    expect(google.authorizationRequest.promptValues).toContain(url.searchParams.get("prompt"));
    const sample = new URL(google.authorizationResponse.code);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect([...back.searchParams.keys()]).toEqual([...sample.searchParams.keys()]);
    expect(back.searchParams.get("state")).toBe(state);
    expect(back.searchParams.get("scope")?.split(" ")).toEqual([
      "openid",
      "https://www.googleapis.com/auth/userinfo.email",
      "https://www.googleapis.com/auth/userinfo.profile",
    ]);
  });

  it("answers arctic's code exchange with Google's fields and types, and a Google-shaped ID token", async () => {
    const { back, codeVerifier } = await consent({ email: "jsmith@example.com", name: "Jane Smith" });
    const tokens: OAuth2Tokens = await arctic().validateAuthorizationCode(
      String(discovery.token_endpoint),
      back.searchParams.get("code") ?? "",
      codeVerifier,
    );
    const answer = tokens.data as Record<string, unknown>;
    for (const [k, v] of Object.entries(answer)) expect(typeof v, k).toBe(google.tokenResponse.fields[k]);
    expect(Object.keys(answer).sort()).toEqual(["access_token", "expires_in", "id_token", "scope", "token_type"]);
    expect(answer.token_type).toBe("Bearer");
    expect(Number.isInteger(answer.expires_in)).toBe(true);
    expect(answer.access_token).not.toMatch(/^eyJ/); // Google's access tokens are opaque, not JWTs

    const parts = tokens.idToken().split(".");
    expect(parts).toHaveLength(3);
    expect(decode(parts[0] ?? "")).toMatchObject({ alg: "RS256", kid: expect.any(String) });
    const claims = decode(parts[1] ?? "");
    for (const k of google.idToken.always) expect(claims, k).toHaveProperty(k);
    for (const [k, v] of Object.entries(claims)) expect(typeof v, k).toBe(google.idToken.claims[k]);
    expect(claims.iss).toBe(discovery.issuer);
    expect(claims.aud).toBe(CLIENT_ID);
    expect(claims.azp).toBe(CLIENT_ID);
    expect(claims.sub).toMatch(/^\d{1,255}$/);
    expect(claims.email).toBe("jsmith@example.com");
    expect(claims.email_verified).toBe(true);
    expect([claims.given_name, claims.family_name]).toEqual(["Jane", "Smith"]);
    expect(claims.exp as number).toBeGreaterThan(claims.iat as number);
    const atHash = b64url(createHash("sha256").update(String(answer.access_token)).digest().subarray(0, 16));
    expect(claims.at_hash).toBe(atHash);
    expect(claims).not.toHaveProperty("auth_time"); // only when asked for
  });

  it("signs the product in through the adapter: the same person, the same digits-only subject", async () => {
    const first = await consent({ email: "Jane@Example.com", name: "Jane Smith" });
    const again = await consent({ email: "jane@example.com" });
    const a = await googleOAuth(env()).finish(first.back.searchParams.get("code") ?? "", first.codeVerifier);
    const b = await googleOAuth(env()).finish(again.back.searchParams.get("code") ?? "", again.codeVerifier);
    expect(a).toMatchObject({ email: "jane@example.com", emailVerified: true, name: "Jane Smith" });
    expect(a.sub).toMatch(/^\d+$/);
    expect(b.sub).toBe(a.sub);
    const unverified = await consent({ email: "new@example.com", verified: false });
    expect(
      (await googleOAuth(env()).finish(unverified.back.searchParams.get("code") ?? "", unverified.codeVerifier))
        .emailVerified,
    ).toBe(false);
  });

  it("sends auth_time only when the claims parameter asks, as Google documents; the re-authentication asks", async () => {
    expect(google.idToken.claimsNote).toContain("auth_time only when asked for by the claims parameter");
    const reauth = await consent({ email: "jane@example.com" }, { reauth: true });
    expect(reauth.url.searchParams.get("max_age")).toBe("0");
    expect(JSON.parse(reauth.url.searchParams.get("claims") ?? "null")).toEqual({
      id_token: { auth_time: { essential: true } },
    });
    const identity = await googleOAuth(env()).finish(reauth.back.searchParams.get("code") ?? "", reauth.codeVerifier);
    expect(identity.authTime).toBeGreaterThan(Date.now() - 60_000);
    // max_age=0 without the claims parameter: Google authenticates again but does not say when.
    const maxAgeOnly = await consent({ email: "jane@example.com" }, { reauth: true, drop: ["claims"] });
    const tokens = await arctic().validateAuthorizationCode(
      String(discovery.token_endpoint),
      maxAgeOnly.back.searchParams.get("code") ?? "",
      maxAgeOnly.codeVerifier,
    );
    expect(decode(tokens.idToken().split(".")[1] ?? "")).not.toHaveProperty("auth_time");
  });

  it("the product sends the nonce Google's table marks required, and the ID token carries it back as in Google's sample", async () => {
    // Google's sample request and sample ID token carry the same nonce.
    const sampleNonce = new URL(google.authorizationRequest.url).searchParams.get("nonce");
    expect(google.idToken.payload.nonce).toBe(sampleNonce);
    const { url, back, codeVerifier } = await consent({ email: "jane@example.com" });
    const nonce = url.searchParams.get("nonce");
    expect(nonce).toBeTruthy();
    const tokens = await arctic().validateAuthorizationCode(
      String(discovery.token_endpoint),
      back.searchParams.get("code") ?? "",
      codeVerifier,
    );
    expect(decode(tokens.idToken().split(".")[1] ?? "").nonce).toBe(nonce);
  });

  it("gives a refresh_token only with access_type=offline, as Google documents", async () => {
    const offline = await consent({ email: "jane@example.com" }, { extra: { access_type: "offline" } });
    const tokens = await arctic().validateAuthorizationCode(
      String(discovery.token_endpoint),
      offline.back.searchParams.get("code") ?? "",
      offline.codeVerifier,
    );
    expect(typeof tokens.refreshToken()).toBe("string");
  });

  /** The token endpoint's answer to a raw request, exactly as arctic sends one. */
  async function exchange(code: string, verifier: string, redirectUri = REDIRECT_URI) {
    const res = await fetch(String(discovery.token_endpoint), {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
        Authorization: `Basic ${btoa(`${CLIENT_ID}:${CLIENT_SECRET}`)}`,
      },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Google's error shape: the example's keys, both strings. */
  function expectGoogleError(got: { status: number; body: Record<string, unknown> }, error: string, status: number) {
    expect(Object.keys(got.body).sort()).toEqual(Object.keys(google.tokenErrors.example.answer).sort());
    expect(typeof got.body.error_description).toBe("string");
    expect(got.body.error).toBe(error);
    expect(got.status).toBe(status);
  }

  it("refuses a reused code and a made-up one with Google's invalid_grant (400), which arctic reads", async () => {
    const { back, codeVerifier } = await consent({ email: "jane@example.com" });
    const code = back.searchParams.get("code") ?? "";
    expect((await exchange(code, codeVerifier)).status).toBe(200);
    const status = google.tokenErrors.codes.invalid_grant?.status ?? 0;
    expectGoogleError(await exchange(code, codeVerifier), "invalid_grant", status);
    expectGoogleError(await exchange("4/P7q7W91a-oMsCeLvIaQm6bTrgtp7", codeVerifier), "invalid_grant", status);
    const err = await arctic()
      .validateAuthorizationCode(String(discovery.token_endpoint), code, codeVerifier)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuth2RequestError);
    expect((err as OAuth2RequestError).code).toBe("invalid_grant");
    await expect(googleOAuth(env()).finish(code, codeVerifier)).rejects.toThrow();
  });

  it("refuses a wrong PKCE verifier with invalid_grant", async () => {
    const { back } = await consent({ email: "jane@example.com" });
    expectGoogleError(
      await exchange(back.searchParams.get("code") ?? "", generateCodeVerifier()),
      "invalid_grant",
      400,
    );
  });

  it("refuses a redirect_uri other than the authorization request's with Google's redirect_uri_mismatch (400)", async () => {
    const { back, codeVerifier } = await consent({ email: "jane@example.com" });
    const got = await exchange(
      back.searchParams.get("code") ?? "",
      codeVerifier,
      "http://evil.test/auth/google/callback",
    );
    expect(google.authorizationErrors.userFacing).toContain(got.body.error);
    expectGoogleError(got, "redirect_uri_mismatch", 400);
  });

  it("shows Google's user-facing redirect_uri_mismatch page, without sending the browser on, for an unregistered redirect_uri", async () => {
    const url = new URL(String(discovery.authorization_endpoint));
    const verifier = generateCodeVerifier();
    const bad = new OAuth2Client(CLIENT_ID, CLIENT_SECRET, "http://evil.test/callback").createAuthorizationURLWithPKCE(
      url.href,
      generateState(),
      CodeChallengeMethod.S256,
      verifier,
      ["openid", "email"],
    );
    const res = await fetch(bad, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("redirect_uri_mismatch");
  });

  it("sends a refusal back as Google's ?error=access_denied (with the state) and no code", async () => {
    const { back, state } = await consent("cancel");
    expect(back.searchParams.get("error")).toBe(new URL(google.authorizationResponse.error).searchParams.get("error"));
    expect(back.searchParams.get("state")).toBe(state);
    expect(back.searchParams.has("code")).toBe(false);
  });
});
