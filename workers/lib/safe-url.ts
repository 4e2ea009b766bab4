// The guard for addresses our server fetches or posts to on a caller's behalf
// (a photo by URL, a job's callback): server-side request forgery must not
// reach our own network. docs/decisions/0120-public-api.md
//
//   - only http: and https:, no user:password@ part;
//   - no private, loopback, link-local, shared, multicast or reserved address,
//     whether written as an IP literal or resolved from the host name (over
//     DNS-over-HTTPS: a Worker cannot see what its own fetch() resolved);
//   - redirects are followed by hand, each hop checked the same way.
//
// Local development and tests may reach loopback (they serve files from
// 127.0.0.1); nothing else private, even there.

export interface UrlPolicy {
  /** Development and tests only: 127.0.0.0/8, ::1 and localhost are allowed. */
  allowLoopback: boolean;
  /** Resolves a host name to its addresses; when absent, names are not resolved (development only). */
  resolve?: (host: string) => Promise<string[]>;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const BAD_URL = "The address must be an http:// or https:// URL.";
const PRIVATE = "The address points to a private or local network.";

function parseV4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

function v4Kind(p: number[]): "public" | "loopback" | "private" {
  const [a = 0, b = 0, c = 0] = p;
  if (a === 127) return "loopback";
  if (
    a === 0 ||
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 0 && c === 0) ||
    (a === 192 && b === 0 && c === 2) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224
  )
    return "private";
  return "public";
}

/** Expands an IPv6 literal (no brackets) to 8 groups, or null. */
function parseV6(host: string): number[] | null {
  if (!host.includes(":")) return null;
  let h = host.toLowerCase().split("%")[0]!;
  const v4 = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(h);
  if (v4) {
    const p = parseV4(v4[1]!);
    if (!p) return null;
    h = `${h.slice(0, -v4[1]!.length)}${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const halves = h.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}

function v6Kind(g: number[]): "public" | "loopback" | "private" {
  const zeroHead = g.slice(0, 5).every((x) => x === 0);
  if (zeroHead && g[5] === 0 && g[6] === 0 && g[7] === 1) return "loopback";
  if (g.every((x) => x === 0)) return "private";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible: judge the IPv4 address.
  if (zeroHead && (g[5] === 0xffff || g[5] === 0)) {
    return v4Kind([g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255]);
  }
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return "private"; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return "private"; // fe80::/10 link-local
  if ((first & 0xff00) === 0xff00) return "private"; // multicast
  if (first === 0x2001 && g[1] === 0x0db8) return "private"; // documentation
  if (first === 0x0064 && g[1] === 0xff9b) return "private"; // NAT64
  return "public";
}

/** What kind of address an IP literal is; null when `host` is not an IP literal. */
export function addressKind(host: string): "public" | "loopback" | "private" | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const v4 = parseV4(bare);
  if (v4) return v4Kind(v4);
  const v6 = parseV6(bare);
  return v6 ? v6Kind(v6) : null;
}

function allowed(kind: "public" | "loopback" | "private", policy: UrlPolicy): boolean {
  return kind === "public" || (kind === "loopback" && policy.allowLoopback);
}

/** Checks the address itself (scheme, credentials, IP literal, local names), without resolving it. */
export function checkUrlSyntax(raw: string, policy: UrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: BAD_URL };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: BAD_URL };
  if (url.username || url.password) return { ok: false, reason: "The address must not carry a user name or password." };
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (!host) return { ok: false, reason: BAD_URL };
  const kind = addressKind(host);
  if (kind !== null) return allowed(kind, policy) ? { ok: true, url } : { ok: false, reason: PRIVATE };
  // Numeric forms URL() did not normalise (e.g. 0x7f.1) are refused rather than guessed at.
  if (/^[0-9.x]+$/i.test(host)) return { ok: false, reason: PRIVATE };
  const local = host === "localhost" || host.endsWith(".localhost");
  if (local) return policy.allowLoopback ? { ok: true, url } : { ok: false, reason: PRIVATE };
  if (!host.includes(".") || /\.(local|internal|lan|home|corp|intranet)$/.test(host)) {
    return { ok: false, reason: PRIVATE };
  }
  return { ok: true, url };
}

/** The full check: the syntax, then every address the host name resolves to. */
export async function checkUrl(raw: string, policy: UrlPolicy): Promise<UrlCheck> {
  const syntax = checkUrlSyntax(raw, policy);
  if (!syntax.ok) return syntax;
  const host = syntax.url.hostname.toLowerCase();
  if (addressKind(host) !== null || !policy.resolve) return syntax;
  if (policy.allowLoopback && (host === "localhost" || host.endsWith(".localhost"))) return syntax;
  let addresses: string[];
  try {
    addresses = await policy.resolve(host);
  } catch {
    return { ok: false, reason: "The address's host name could not be resolved." };
  }
  if (addresses.length === 0) return { ok: false, reason: "The address's host name could not be resolved." };
  for (const a of addresses) {
    const kind = addressKind(a);
    if (kind === null || !allowed(kind, policy)) return { ok: false, reason: PRIVATE };
  }
  return syntax;
}

/** Resolves A and AAAA records over DNS-over-HTTPS (Cloudflare's resolver). */
export function dohResolver(fetcher: typeof fetch = fetch, timeoutMs = 3000): (host: string) => Promise<string[]> {
  return async (host) => {
    const out: string[] = [];
    for (const type of ["A", "AAAA"]) {
      const res = await fetcher(`https://cloudflare-dns.com/dns-query?name=${encodeURIComponent(host)}&type=${type}`, {
        headers: { Accept: "application/dns-json" },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`DNS lookup failed: ${res.status}`);
      const body = (await res.json()) as { Answer?: { type: number; data: string }[] };
      for (const a of body.Answer ?? []) if (a.type === 1 || a.type === 28) out.push(a.data);
    }
    return out;
  };
}

/** The policy for this deployment: strict in production, loopback allowed when dev tools are on. */
export function urlPolicy(env: Pick<Env, "DEV_TOOLS" | "APP_ENV">, fetcher: typeof fetch = fetch): UrlPolicy {
  const dev = env.DEV_TOOLS === "1" && env.APP_ENV !== "production";
  return dev ? { allowLoopback: true } : { allowLoopback: false, resolve: dohResolver(fetcher) };
}

export type GuardedFetch =
  | { ok: true; response: Response; url: URL }
  | { ok: false; reason: string; kind: "refused" | "network" | "timeout" };

/**
 * fetch() that checks every hop against the policy and follows at most
 * `maxRedirects` redirects by hand. The caller reads (and caps) the body.
 */
export async function guardedFetch(
  raw: string,
  policy: UrlPolicy,
  init: Omit<RequestInit, "fetcher"> & { timeoutMs: number; maxRedirects?: number; fetchImpl?: typeof fetch },
): Promise<GuardedFetch> {
  const { timeoutMs, maxRedirects = 3, fetchImpl = fetch, ...rest } = init;
  const signal = AbortSignal.timeout(timeoutMs);
  let current = raw;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const checked = await checkUrl(current, policy);
    if (!checked.ok) return { ok: false, reason: checked.reason, kind: "refused" };
    let response: Response;
    try {
      response = await fetchImpl(checked.url.toString(), { ...rest, redirect: "manual", signal });
    } catch (err) {
      const timedOut = signal.aborted || (err instanceof Error && err.name === "TimeoutError");
      return timedOut
        ? { ok: false, reason: "The address did not answer in time.", kind: "timeout" }
        : { ok: false, reason: "The address could not be reached.", kind: "network" };
    }
    const location = response.headers.get("Location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      current = new URL(location, checked.url).toString();
      continue;
    }
    return { ok: true, response, url: checked.url };
  }
  return { ok: false, reason: "The address redirected too many times.", kind: "refused" };
}
