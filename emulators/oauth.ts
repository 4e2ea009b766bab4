import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { OAuth2Issuer, OAuth2Service } from "oauth2-mock-server";

// Google's OpenID Connect contract on 127.0.0.1: discovery
// (/.well-known/openid-configuration), /authorize with PKCE, /token returning
// an RS256 ID token, /jwks. oauth2-mock-server holds the signing key and
// serves /jwks; discovery, /authorize and /token are answered here, shaped as
// Google's own documents show them (test/contract/fixtures/google/, checked by
// test/contract/google-answers.test.ts). In front of /authorize sits a small
// consent page where whoever is testing types the Google identity to sign in
// as (e-mail, name, whether Google verified the e-mail), or cancels (Google's
// ?error=access_denied), so people and the e2e tests can be any Google user.
// See docs/decisions/0013-google-sign-in.md.
// `prompt` and `max_age` (OIDC) are checked like a provider checks them: a
// re-authentication (max_age=0 or prompt=login) always shows the page again,
// saying so. auth_time is in the ID token only when the `claims` parameter asks
// for it, as Google documents (max_age alone does not bring it, unlike OIDC Core).

interface Identity {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  auth_time: number;
}

/** What an authorization code stands for until it is exchanged, once. */
interface Grant {
  identity: Identity;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  challenge: string | null;
  challengeMethod: string;
  nonce: string | null;
  offline: boolean;
  authTime: boolean;
  at: number;
}

/** Google's answer to an exchange of a code it no longer knows, or never gave (its `invalid_grant`). */
const CODE_LIFETIME_MS = 10 * 60 * 1000;
const ACCESS_TOKEN_TTL_S = 3599;
/** Google writes the `email` and `profile` scopes back as these when it grants them. */
const GRANTED_SCOPE: Record<string, string> = {
  email: "https://www.googleapis.com/auth/userinfo.email",
  profile: "https://www.googleapis.com/auth/userinfo.profile",
};

const PROMPTS = new Set(["none", "login", "consent", "select_account"]);

/** Why the authorization request's prompt or max_age is not valid OIDC, or null when it is. */
export function invalidReauthParams(query: URLSearchParams): string | null {
  const prompt = query.get("prompt");
  if (prompt !== null) {
    const values = prompt.split(" ");
    if (values.some((v) => !PROMPTS.has(v))) return `unsupported prompt value "${prompt}"`;
    if (values.includes("none") && values.length > 1) return "prompt=none cannot be combined with other values";
  }
  const maxAge = query.get("max_age");
  if (maxAge !== null && !/^\d{1,10}$/.test(maxAge)) return "max_age must be a non-negative integer";
  return null;
}

/** A request that asks the person to authenticate again (OIDC max_age=0 or prompt=login). */
function asksReauth(query: URLSearchParams): boolean {
  return query.get("max_age") === "0" || (query.get("prompt") ?? "").split(" ").includes("login");
}

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * The same e-mail always gets the same Google subject, so a second sign-in finds the same account.
 * Google's `sub` is a string of digits ("10769150350006150715113082367" in its example).
 */
export function subjectFor(email: string): string {
  const digest = createHash("sha256").update(email.trim().toLowerCase()).digest();
  return `1${(digest.readBigUInt64BE(0) % 10n ** 20n).toString().padStart(20, "0")}`;
}

function consentPage(query: URLSearchParams): string {
  const reauth = asksReauth(query)
    ? `<p data-testid="reauth-notice"><strong>The app asked Google to confirm it is you again</strong> (max_age=0): sign in again to continue.</p>`
    : "";
  const hidden = [...query.entries()]
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in with Google (local emulator)</title>
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#0f172a}
label{display:block;margin-top:1rem;font-weight:600}input[type=email],input[type=text]{width:100%;padding:.6rem;font-size:1rem;box-sizing:border-box}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400}button{margin-top:1.5rem;padding:.7rem 1.2rem;font-size:1rem}
p{color:#475569}</style></head>
<body><h1>Sign in with Google</h1>
<p>Local OAuth emulator: type the Google account to sign in as. Nothing leaves this machine.</p>${reauth}
<form method="get" action="/authorize">${hidden}
<label for="login_email">Email</label><input id="login_email" name="login_email" type="email" required>
<label for="login_name">Name</label><input id="login_name" name="login_name" type="text">
<label class="check"><input name="login_email_verified" type="checkbox" value="1" checked> Google has verified this email</label>
<button type="submit">Continue</button>
<button type="submit" name="login_cancel" value="1" formnovalidate>Cancel</button>
</form></body></html>`;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");

/** Google's token-endpoint error: a JSON `error` code and an `error_description`, with a 4xx status. */
function sendError(res: ServerResponse, status: 400 | 401, error: string, description: string): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify({ error, error_description: description }));
}

/** Google shows a user-facing error page (no redirect) for a request it cannot send back to the app. */
function sendErrorPage(res: ServerResponse, error: string, detail: string): void {
  res.writeHead(400, { "Content-Type": "text/html; charset=utf-8" });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error 400: ${esc(error)}</title></head>` +
      `<body><h1>Access blocked: this app's request is invalid</h1><p>Error 400: ${esc(error)}</p><p>${esc(detail)}</p></body></html>`,
  );
}

function redirect(res: ServerResponse, to: URL): void {
  res.writeHead(302, { Location: to.href });
  res.end();
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** The client named by HTTP Basic (client_secret_basic) or by the form (client_secret_post). */
function clientOf(req: IncomingMessage, form: URLSearchParams): { id: string | null; secret: string | null } {
  const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, "base64").toString("utf8");
    const at = decoded.indexOf(":");
    if (at > 0) {
      const part = (s: string) => {
        try {
          return decodeURIComponent(s.replace(/\+/g, " "));
        } catch {
          return s;
        }
      };
      return { id: part(decoded.slice(0, at)), secret: part(decoded.slice(at + 1)) };
    }
  }
  return { id: form.get("client_id"), secret: form.get("client_secret") };
}

/** Whether the authorization request asks for auth_time, through Google's `claims` parameter. */
function wantsAuthTime(query: URLSearchParams): boolean {
  try {
    const claims = JSON.parse(query.get("claims") ?? "null") as { id_token?: Record<string, unknown> } | null;
    return Boolean(claims?.id_token && "auth_time" in claims.id_token);
  } catch {
    return false;
  }
}

function pkceMatches(verifier: string, challenge: string, method: string): boolean {
  if (method === "plain") return verifier === challenge;
  return b64url(createHash("sha256").update(verifier).digest()) === challenge;
}

export async function startOAuthEmulator(opts: {
  port: number;
  /** The client's registered redirect URIs; any other at /authorize gets Google's redirect_uri_mismatch page. */
  redirectUris?: string[];
}): Promise<Server> {
  const issuer = new OAuth2Issuer();
  await issuer.keys.generate("RS256");
  // Serves /jwks from the issuer's key (and the endpoints Google's contract does not name).
  const service = new OAuth2Service(issuer);
  const grants = new Map<string, Grant>();
  const refreshTokens = new Map<string, Grant>();
  let base = "";

  /** Google's discovery document's fields, at this emulator's addresses. Not emulated: the device flow, userinfo, revocation. */
  const discovery = () => ({
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    jwks_uri: `${base}/jwks`,
    response_types_supported: ["code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    scopes_supported: ["openid", "email", "profile"],
    token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
    claims_supported: [
      "aud",
      "email",
      "email_verified",
      "exp",
      "family_name",
      "given_name",
      "iat",
      "iss",
      "locale",
      "name",
      "picture",
      "sub",
    ],
    code_challenge_methods_supported: ["plain", "S256"],
  });

  function authorize(url: URL, res: ServerResponse) {
    const q = url.searchParams;
    const invalid = invalidReauthParams(q);
    if (invalid) return sendErrorPage(res, "invalid_request", invalid);
    const clientId = q.get("client_id");
    const redirectUri = q.get("redirect_uri");
    const scopes = (q.get("scope") ?? "").split(/[\s+]+/).filter(Boolean);
    if (!clientId) return sendErrorPage(res, "invalid_request", "Missing required parameter: client_id");
    if (!redirectUri) return sendErrorPage(res, "invalid_request", "Missing required parameter: redirect_uri");
    if (opts.redirectUris && !opts.redirectUris.includes(redirectUri))
      return sendErrorPage(
        res,
        "redirect_uri_mismatch",
        `redirect_uri=${redirectUri} is not registered for this client`,
      );
    if (q.get("response_type") !== "code")
      return sendErrorPage(res, "invalid_request", "Only response_type=code is emulated");
    if (scopes.length === 0) return sendErrorPage(res, "invalid_request", "Missing required parameter: scope");
    const challengeMethod = q.get("code_challenge_method") ?? "plain";
    if (q.get("code_challenge") && challengeMethod !== "S256" && challengeMethod !== "plain")
      return sendErrorPage(res, "invalid_request", `Unsupported code_challenge_method ${challengeMethod}`);

    const back = new URL(redirectUri);
    const state = q.get("state");
    if (q.get("login_cancel") === "1") {
      // The person said no: Google sends the browser back with ?error=access_denied.
      back.searchParams.set("error", "access_denied");
      if (state !== null) back.searchParams.set("state", state);
      return redirect(res, back);
    }
    const email = q.get("login_email")?.trim().toLowerCase();
    if (!email) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(consentPage(q));
      return;
    }
    const code = `4/0A${b64url(randomBytes(36))}`;
    grants.set(code, {
      identity: {
        sub: subjectFor(email),
        email,
        email_verified: q.get("login_email_verified") === "1",
        name: q.get("login_name")?.trim() || email.split("@")[0] || email,
        auth_time: Math.floor(Date.now() / 1000),
      },
      clientId,
      redirectUri,
      scopes,
      challenge: q.get("code_challenge"),
      challengeMethod,
      nonce: q.get("nonce"),
      offline: q.get("access_type") === "offline",
      authTime: wantsAuthTime(q),
      at: Date.now(),
    });
    // As in Google's example: state, code, then the scopes granted.
    if (state !== null) back.searchParams.set("state", state);
    back.searchParams.set("code", code);
    back.searchParams.set("scope", scopes.map((s) => GRANTED_SCOPE[s] ?? s).join(" "));
    redirect(res, back);
  }

  async function answerTokens(res: ServerResponse, grant: Grant, withRefresh: boolean): Promise<void> {
    const accessToken = `ya29.${b64url(randomBytes(48))}`;
    const body: Record<string, string | number> = { access_token: accessToken, expires_in: ACCESS_TOKEN_TTL_S };
    if (grant.scopes.includes("openid")) {
      const { identity } = grant;
      const [given, ...family] = identity.name.split(/\s+/);
      body.id_token = await issuer.buildToken({
        expiresIn: 3600,
        scopesOrTransform: (_header, payload) => {
          Reflect.deleteProperty(payload, "nbf"); // not among Google's claims
          Object.assign(payload, {
            azp: grant.clientId,
            aud: grant.clientId,
            sub: identity.sub,
            // OIDC Core 3.1.3.6: the left half of SHA-256 of the access token, base64url.
            at_hash: b64url(createHash("sha256").update(accessToken).digest().subarray(0, 16)),
            ...(grant.scopes.includes("email")
              ? { email: identity.email, email_verified: identity.email_verified }
              : {}),
            ...(grant.scopes.includes("profile")
              ? {
                  name: identity.name,
                  ...(given ? { given_name: given } : {}),
                  ...(family.length ? { family_name: family.join(" ") } : {}),
                }
              : {}),
            ...(grant.nonce !== null ? { nonce: grant.nonce } : {}),
            ...(grant.authTime ? { auth_time: identity.auth_time } : {}),
          });
        },
      });
    }
    body.scope = grant.scopes.map((s) => GRANTED_SCOPE[s] ?? s).join(" ");
    body.token_type = "Bearer";
    if (withRefresh) {
      const refreshToken = `1//0${b64url(randomBytes(48))}`;
      refreshTokens.set(refreshToken, grant);
      body.refresh_token = refreshToken;
    }
    res.writeHead(200, {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "no-cache, no-store, max-age=0, must-revalidate",
      Pragma: "no-cache",
    });
    res.end(JSON.stringify(body));
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    const client = clientOf(req, form);
    if (!client.id) return sendError(res, 401, "invalid_client", "The OAuth client was not found.");
    const grantType = form.get("grant_type");
    if (grantType === "refresh_token") {
      const grant = refreshTokens.get(form.get("refresh_token") ?? "");
      if (!grant || grant.clientId !== client.id)
        return sendError(res, 400, "invalid_grant", "Token has been expired or revoked.");
      return answerTokens(res, grant, false);
    }
    if (grantType !== "authorization_code")
      return sendError(res, 400, "unsupported_grant_type", `Invalid grant_type: ${grantType ?? ""}`);
    const code = form.get("code") ?? "";
    const grant = grants.get(code);
    // Unknown, already claimed, expired or another client's: Google's invalid_grant.
    if (!grant || Date.now() - grant.at > CODE_LIFETIME_MS || grant.clientId !== client.id)
      return sendError(res, 400, "invalid_grant", "Bad Request");
    if (form.get("redirect_uri") !== grant.redirectUri)
      return sendError(res, 400, "redirect_uri_mismatch", "Bad Request");
    if (grant.challenge !== null) {
      const verifier = form.get("code_verifier");
      if (!verifier) return sendError(res, 400, "invalid_grant", "Missing code verifier.");
      if (!pkceMatches(verifier, grant.challenge, grant.challengeMethod))
        return sendError(res, 400, "invalid_grant", "Invalid code verifier.");
    }
    grants.delete(code);
    return answerTokens(res, grant, grant.offline);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const fail = (err: unknown) => {
      if (!res.headersSent) sendError(res, 400, "invalid_request", String(err));
    };
    if (req.method === "GET" && url.pathname === "/.well-known/openid-configuration") {
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(discovery()));
      return;
    }
    if (req.method === "GET" && url.pathname === "/authorize") return authorize(url, res);
    if (req.method === "POST" && url.pathname === "/token") {
      token(req, res).catch(fail);
      return;
    }
    service.requestHandler(req, res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", () => {
      // The issuer is this server's own address, also when the port was chosen by the system (port 0).
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      issuer.url = base;
      resolve(server);
    });
  });
}
