import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { OAuth2Issuer, OAuth2Service } from "oauth2-mock-server";

// Google's OpenID Connect contract on 127.0.0.1, built on oauth2-mock-server:
// discovery (/.well-known/openid-configuration), /authorize with PKCE, /token
// returning an RS256 ID token, /jwks. In front of /authorize sits a small
// consent page where whoever is testing types the Google identity to sign in
// as (e-mail, name, whether Google verified the e-mail), so people and the e2e
// tests can be any Google user. See docs/decisions/0013-google-sign-in.md.
// `prompt` and `max_age` (OIDC) are checked like a provider checks them: a
// re-authentication (max_age=0 or prompt=login) always shows the page again,
// saying so, and every ID token carries auth_time, the moment the page was
// submitted (Google sends it with "Session age claims" on).

interface Identity {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  auth_time: number;
}

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

/** The same e-mail always gets the same Google subject, so a second sign-in finds the same account. */
export function subjectFor(email: string): string {
  return `google-${createHash("sha256").update(email.trim().toLowerCase()).digest("hex").slice(0, 20)}`;
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
</form></body></html>`;
}

export async function startOAuthEmulator(opts: { port: number }): Promise<Server> {
  const issuer = new OAuth2Issuer();
  issuer.url = `http://127.0.0.1:${opts.port}`;
  await issuer.keys.generate("RS256");
  const service = new OAuth2Service(issuer);
  // Authorization code -> the identity chosen on the consent page.
  const chosen = new Map<string, Identity>();

  service.on("beforeAuthorizeRedirect", (redirect: { url: URL }, req: IncomingMessage) => {
    const q = new URL(req.url ?? "/", "http://localhost").searchParams;
    const code = redirect.url.searchParams.get("code");
    const email = q.get("login_email")?.trim().toLowerCase();
    if (!code || !email) return;
    chosen.set(code, {
      sub: subjectFor(email),
      email,
      email_verified: q.get("login_email_verified") === "1",
      name: q.get("login_name")?.trim() || email.split("@")[0] || email,
      auth_time: Math.floor(Date.now() / 1000),
    });
  });

  service.on(
    "beforeTokenSigning",
    (token: { payload: Record<string, unknown> }, req: IncomingMessage & { body?: Record<string, unknown> }) => {
      const code = req.body?.code;
      const identity = typeof code === "string" ? chosen.get(code) : undefined;
      if (identity) Object.assign(token.payload, identity);
    },
  );
  service.on("beforeResponse", (_res: unknown, req: IncomingMessage & { body?: Record<string, unknown> }) => {
    const code = req.body?.code;
    if (typeof code === "string") chosen.delete(code);
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const invalid =
      req.method === "GET" && url.pathname === "/authorize" ? invalidReauthParams(url.searchParams) : null;
    if (invalid) {
      res.writeHead(400, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`invalid_request: ${invalid}`);
      return;
    }
    if (req.method === "GET" && url.pathname === "/authorize" && !url.searchParams.get("login_email")) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(consentPage(url.searchParams));
      return;
    }
    service.requestHandler(req, res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", () => resolve(server));
  });
}
