import { decodeBase64urlIgnorePadding, encodeBase64urlNoPadding } from "@oslojs/encoding";
import { CodeChallengeMethod, generateCodeVerifier, generateState, OAuth2Client } from "arctic";
import { cutText } from "~/shared/text";

// Google sign-in: OAuth 2.0 authorization code flow with PKCE and state
// (arctic's generic OAuth2Client), endpoints found through OpenID Connect
// discovery on GOOGLE_ISSUER_URL. In production that is Google; locally and in
// tests it is the OAuth emulator (emulators/oauth.ts). The ID token is checked
// against the issuer's published keys. See docs/decisions/0013-google-sign-in.md.

export const GOOGLE_ISSUER = "https://accounts.google.com";
const SCOPES = ["openid", "email", "profile"];
const CACHE_MS = 60 * 60 * 1000;
const CLOCK_SKEW_S = 60;

export interface GoogleIdentity {
  sub: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  /** When Google last actively authenticated the person (ms), if the ID token says (`auth_time`). */
  authTime?: number;
}

export class OAuthError extends Error {}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

type Jwk = JsonWebKey & { kid?: string };

const discoveries = new Map<string, { value: Discovery; at: number }>();
const keySets = new Map<string, { keys: Jwk[]; at: number }>();

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { Accept: "application/json" } });
  if (!res.ok) throw new OAuthError(`${url} answered ${res.status}`);
  return (await res.json()) as T;
}

async function discover(issuer: string): Promise<Discovery> {
  const cached = discoveries.get(issuer);
  if (cached && Date.now() - cached.at < CACHE_MS) return cached.value;
  const value = await getJson<Discovery>(`${issuer}/.well-known/openid-configuration`);
  if (!value.authorization_endpoint || !value.token_endpoint || !value.jwks_uri) {
    throw new OAuthError("discovery document lacks endpoints");
  }
  discoveries.set(issuer, { value, at: Date.now() });
  return value;
}

async function signingKey(jwksUri: string, kid: string | undefined): Promise<Jwk> {
  const pick = (keys: Jwk[]) => keys.find((k) => k.kty === "RSA" && (kid === undefined || k.kid === kid));
  const cached = keySets.get(jwksUri);
  const fromCache = cached && Date.now() - cached.at < CACHE_MS ? pick(cached.keys) : undefined;
  if (fromCache) return fromCache;
  // Unknown key id: the issuer may have rotated its keys, so fetch them again.
  const { keys } = await getJson<{ keys: Jwk[] }>(jwksUri);
  keySets.set(jwksUri, { keys, at: Date.now() });
  const key = pick(keys);
  if (!key) throw new OAuthError("no published key matches the ID token");
  return key;
}

function decodePart(part: string | undefined): Record<string, unknown> {
  if (!part) throw new OAuthError("malformed ID token");
  const value: unknown = JSON.parse(new TextDecoder().decode(decodeBase64urlIgnorePadding(part)));
  if (typeof value !== "object" || value === null) throw new OAuthError("malformed ID token");
  return value as Record<string, unknown>;
}

/**
 * The nonce of an authorization request (Google's parameter table marks it required), derived from the PKCE
 * verifier: only the browser's HttpOnly state cookie holds the verifier, and the request carries its S256 challenge,
 * not this digest, so the ID token is bound to that browser with nothing more stored (ADR 0326).
 */
export async function nonceFor(codeVerifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`oidc-nonce.${codeVerifier}`));
  return encodeBase64urlNoPadding(new Uint8Array(digest));
}

/** Verifies an ID token's signature and claims (its nonce, when one was sent) and returns who it names. */
export async function verifyIdToken(
  idToken: string,
  opts: { discovery: Discovery; clientId: string; now?: number; nonce?: string },
): Promise<GoogleIdentity> {
  const parts = idToken.split(".");
  if (parts.length !== 3) throw new OAuthError("malformed ID token");
  const header = decodePart(parts[0]);
  const claims = decodePart(parts[1]);
  if (header.alg !== "RS256") throw new OAuthError(`unexpected ID token algorithm ${String(header.alg)}`);
  const jwk = await signingKey(opts.discovery.jwks_uri, typeof header.kid === "string" ? header.kid : undefined);
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: jwk.kty, n: jwk.n, e: jwk.e, alg: "RS256", ext: true },
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const signed = new TextEncoder().encode(`${parts[0]}.${parts[1]}`);
  const signature = decodeBase64urlIgnorePadding(parts[2] ?? "");
  if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, signature as BufferSource, signed))) {
    throw new OAuthError("ID token signature does not verify");
  }

  // Google writes its issuer with or without the scheme.
  const issuers = [opts.discovery.issuer];
  if (opts.discovery.issuer === GOOGLE_ISSUER) issuers.push("accounts.google.com");
  if (typeof claims.iss !== "string" || !issuers.includes(claims.iss)) throw new OAuthError("ID token issuer mismatch");
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(opts.clientId)) throw new OAuthError("ID token audience mismatch");
  const nowS = Math.floor((opts.now ?? Date.now()) / 1000);
  if (typeof claims.exp !== "number" || claims.exp + CLOCK_SKEW_S < nowS) throw new OAuthError("ID token expired");
  if (typeof claims.iat === "number" && claims.iat - CLOCK_SKEW_S > nowS)
    throw new OAuthError("ID token from the future");

  if (opts.nonce !== undefined && claims.nonce !== opts.nonce) throw new OAuthError("ID token nonce mismatch");
  if (typeof claims.sub !== "string" || claims.sub === "") throw new OAuthError("ID token has no subject");
  if (typeof claims.email !== "string" || !claims.email.includes("@")) throw new OAuthError("ID token has no email");
  return {
    sub: claims.sub,
    email: claims.email.trim().toLowerCase(),
    emailVerified: claims.email_verified === true || claims.email_verified === "true",
    name: typeof claims.name === "string" && claims.name.trim() ? cutText(claims.name.trim(), 100) : null,
    ...(typeof claims.auth_time === "number" ? { authTime: claims.auth_time * 1000 } : {}),
  };
}

export interface GoogleOAuth {
  /**
   * Where to send the browser, and the values to keep in a short-lived cookie until it comes back.
   * `reauth` asks Google to authenticate the person again (max_age=0) and to say when (auth_time), for confirming
   * an account deletion.
   */
  start(opts?: { reauth?: boolean }): Promise<{ url: URL; state: string; codeVerifier: string }>;
  /** Exchanges the code (with the PKCE verifier) and returns the verified identity. */
  finish(code: string, codeVerifier: string): Promise<GoogleIdentity>;
}

/** What the adapter needs of the environment (the Worker's Env, or a test's stand-in). */
export interface GoogleOAuthConfig {
  GOOGLE_CLIENT_ID?: string;
  GOOGLE_CLIENT_SECRET?: string;
  GOOGLE_ISSUER_URL?: string;
  APP_ORIGIN: string;
}

export function googleOAuth(env: GoogleOAuthConfig): GoogleOAuth {
  const issuer = (env.GOOGLE_ISSUER_URL || GOOGLE_ISSUER).replace(/\/$/, "");
  const clientId = env.GOOGLE_CLIENT_ID;
  const redirectUri = `${env.APP_ORIGIN.replace(/\/$/, "")}/auth/google/callback`;
  const client = () => {
    if (!clientId || !env.GOOGLE_CLIENT_SECRET)
      throw new OAuthError("GOOGLE_CLIENT_ID or GOOGLE_CLIENT_SECRET is not set");
    return new OAuth2Client(clientId, env.GOOGLE_CLIENT_SECRET, redirectUri);
  };
  return {
    async start(opts = {}) {
      const discovery = await discover(issuer);
      const state = generateState();
      const codeVerifier = generateCodeVerifier();
      const url = client().createAuthorizationURLWithPKCE(
        discovery.authorization_endpoint,
        state,
        CodeChallengeMethod.S256,
        codeVerifier,
        SCOPES,
      );
      url.searchParams.set("prompt", "select_account");
      url.searchParams.set("nonce", await nonceFor(codeVerifier));
      // OIDC max_age=0: the provider must authenticate the person again. Google documents prompt values none,
      // consent and select_account only, so no prompt=login is sent; it puts auth_time in the ID token only when
      // the claims parameter asks for it (and the client's session age claims setting is on).
      if (opts.reauth) {
        url.searchParams.set("max_age", "0");
        url.searchParams.set("claims", JSON.stringify({ id_token: { auth_time: { essential: true } } }));
      }
      return { url, state, codeVerifier };
    },
    async finish(code, codeVerifier) {
      const discovery = await discover(issuer);
      const tokens = await client().validateAuthorizationCode(discovery.token_endpoint, code, codeVerifier);
      return verifyIdToken(tokens.idToken(), {
        discovery,
        clientId: clientId ?? "",
        nonce: await nonceFor(codeVerifier),
      });
    },
  };
}
