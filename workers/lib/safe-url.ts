import { PinnedHttpError, pinnedHttpRequest, type SocketConnect } from "./pinned-http";

// The guard for addresses our server fetches or posts to on a caller's behalf
// (a photo by URL, a job's callback): server-side request forgery must not
// reach our own network. docs/decisions/0120-public-api.md and
// docs/decisions/0152-ssrf-the-checked-address-is-the-one-connected-to.md
//
//   - only http: and https:, no user:password@ part, only the standard port
//     (443 for https, 80 for http), never our own origin's host;
//   - no address outside the public unicast internet: private, loopback,
//     link-local, shared, multicast, reserved, and every entry of IANA's IPv4
//     and IPv6 special-purpose registries; an IPv6 form that carries an IPv4
//     address (mapped, translated, compatible, 6to4) is judged by that IPv4
//     address, and Teredo and NAT64 are refused; whether written as an IP
//     literal or resolved from the host name (once, over DNS-over-HTTPS);
//   - the address checked is the address used: http goes over a socket opened
//     to the checked IP (workers/lib/pinned-http.ts), so no second lookup can
//     send it elsewhere; https goes through fetch() to the checked name, whose
//     certificate the platform verifies, so a name that rebinds to another
//     address finds a peer that cannot prove it is that name and no request
//     is ever sent to it;
//   - redirects are followed by hand, each hop checked the same way.
//
// Local development and tests may reach loopback on any port (they serve
// files from 127.0.0.1); nothing else private, even there.

export type AddressKind = "public" | "loopback" | "private";

export interface UrlPolicy {
  /** Development and tests only: 127.0.0.0/8, ::1 and localhost are allowed, on any port. */
  allowLoopback: boolean;
  /**
   * Resolves a host name to its addresses, once per hop; when absent, names are not resolved and are fetched by name
   * (development and the workerd tests only: urlPolicy never leaves it out in production).
   */
  resolve?: (host: string) => Promise<string[]>;
  /** Our own origin (APP_ORIGIN): its host is refused under any scheme and port. */
  ownOrigin?: string;
  /** Opens the socket of a pinned http request (cloudflare:sockets connect); tests pass their own. */
  connect?: SocketConnect;
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };
/** A checked URL and the addresses it may be connected to (undefined: a name not resolved, development only). */
export type ResolvedCheck = { ok: true; url: URL; addresses?: string[] } | { ok: false; reason: string };

const BAD_URL = "The address must be an http:// or https:// URL.";
const PRIVATE = "The address points to a private or local network.";
const BAD_PORT = "The address must use the standard port: 443 for https://, 80 for http://.";
const OURSELVES = "The address points to Stagewise itself.";

function parseV4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/**
 * IANA's IPv4 special-purpose address registry (and multicast, 224.0.0.0/4), as [first octets, prefix length].
 * Everything here is refused, globally reachable entries (AS112, AMT, the 6to4 relay anycast) included: nobody
 * serves a listing photo from them.
 */
const V4_SPECIAL: readonly [number[], number][] = [
  [[0], 8], // "this network"
  [[10], 8], // private
  [[100, 64], 10], // shared address space (carrier-grade NAT)
  [[169, 254], 16], // link-local (cloud metadata lives here)
  [[172, 16], 12], // private
  [[192, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2], 24], // documentation (TEST-NET-1)
  [[192, 31, 196], 24], // AS112-v4
  [[192, 52, 193], 24], // AMT
  [[192, 88, 99], 24], // deprecated 6to4 relay anycast
  [[192, 168], 16], // private
  [[192, 175, 48], 24], // direct delegation AS112
  [[198, 18], 15], // benchmarking
  [[198, 51, 100], 24], // documentation (TEST-NET-2)
  [[203, 0, 113], 24], // documentation (TEST-NET-3)
  [[224], 4], // multicast
  [[240], 4], // reserved, and the limited broadcast address
];

function inV4(p: number[], [net, bits]: [number[], number]): boolean {
  const value = ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0;
  const base = (((net[0] ?? 0) << 24) | ((net[1] ?? 0) << 16) | ((net[2] ?? 0) << 8) | (net[3] ?? 0)) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (value & mask) >>> 0 === (base & mask) >>> 0;
}

function v4Kind(p: number[]): AddressKind {
  if (p[0] === 127) return "loopback";
  return V4_SPECIAL.some((range) => inV4(p, range as [number[], number])) ? "private" : "public";
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

/** An IPv4 address carried inside an IPv6 one: judged as itself, but only a mapped one is really loopback. */
function embedded(hi: number, lo: number, mapped: boolean): AddressKind {
  const kind = v4Kind([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  return kind === "loopback" && !mapped ? "private" : kind;
}

function v6Kind(g: number[]): AddressKind {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 7) && g[7] === 1) return "loopback"; // ::1
  if (zeros(0, 8)) return "private"; // ::
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!, true); // ::ffff:0:0/96, IPv4-mapped
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6]!, g[7]!, false); // ::ffff:0:0:0/96, SIIT
  if (zeros(0, 6)) return embedded(g[6]!, g[7]!, false); // ::/96, IPv4-compatible (deprecated)
  const [a = 0, b = 0, c = 0] = g;
  if (a === 0x0064 && b === 0xff9b) return "private"; // 64:ff9b::/96 and 64:ff9b:1::/48, NAT64
  if (a === 0x2002) return embedded(b, c, false); // 2002::/16, 6to4: the IPv4 address in bits 16-47
  if (a === 0x2001 && b < 0x0200) return "private"; // 2001::/23, IETF assignments: Teredo 2001::/32, ORCHID, ...
  if (a === 0x2001 && b === 0x0db8) return "private"; // 2001:db8::/32, documentation
  if (a === 0x3fff && b < 0x1000) return "private"; // 3fff::/20, documentation
  if (a === 0x2620 && b === 0x004f && c === 0x8000) return "private"; // 2620:4f:8000::/48, AS112
  // Only 2000::/3 is global unicast: the rest (100::/64 discard, fc00::/7, fe80::/10, fec0::/10, ff00::/8,
  // 5f00::/16, ...) is refused.
  if ((a & 0xe000) !== 0x2000) return "private";
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

function allowed(kind: AddressKind, policy: UrlPolicy): boolean {
  return kind === "public" || (kind === "loopback" && policy.allowLoopback);
}

function bareHost(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
}

function isLoopbackName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || addressKind(host) === "loopback";
}

function effectivePort(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/** The target is our own origin: its host under any scheme and port (and, for a loopback origin, its port on loopback). */
function isOwnOrigin(url: URL, ownOrigin: string | undefined): boolean {
  if (!ownOrigin) return false;
  let own: URL;
  try {
    own = new URL(ownOrigin);
  } catch {
    return false;
  }
  const target = bareHost(url.hostname);
  const ours = bareHost(own.hostname);
  if (target === ours) return true;
  // A local origin (http://localhost:5173) is also reachable as 127.0.0.1:5173 or [::1]:5173.
  return isLoopbackName(ours) && isLoopbackName(target) && effectivePort(url) === effectivePort(own);
}

/** Checks the address itself (scheme, credentials, port, our own origin, IP literal, local names), without resolving it. */
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
  if (isOwnOrigin(url, policy.ownOrigin)) return { ok: false, reason: OURSELVES };
  const kind = addressKind(host);
  const loopbackTarget =
    kind === "loopback" || (kind === null && (host === "localhost" || host.endsWith(".localhost")));
  // URL() drops a port that is the scheme's default, so any port left is another one.
  if (url.port !== "" && !(loopbackTarget && policy.allowLoopback)) return { ok: false, reason: BAD_PORT };
  if (kind !== null) return allowed(kind, policy) ? { ok: true, url } : { ok: false, reason: PRIVATE };
  // Numeric forms URL() did not normalise (e.g. 0x7f.1) are refused rather than guessed at.
  if (/^[0-9.x]+$/i.test(host)) return { ok: false, reason: PRIVATE };
  if (loopbackTarget) return policy.allowLoopback ? { ok: true, url } : { ok: false, reason: PRIVATE };
  if (!host.includes(".") || /\.(local|internal|lan|home|corp|intranet)$/.test(host)) {
    return { ok: false, reason: PRIVATE };
  }
  return { ok: true, url };
}

/**
 * The full check: the syntax, then every address the host name resolves to, looked up once. The answer carries the
 * addresses that were checked: the only ones the request may then go to.
 */
export async function checkUrl(raw: string, policy: UrlPolicy): Promise<ResolvedCheck> {
  const syntax = checkUrlSyntax(raw, policy);
  if (!syntax.ok) return syntax;
  const host = bareHost(syntax.url.hostname);
  if (addressKind(host) !== null) return { ...syntax, addresses: [host] };
  if (policy.allowLoopback && (host === "localhost" || host.endsWith(".localhost"))) {
    return { ...syntax, addresses: ["127.0.0.1"] };
  }
  if (!policy.resolve) return syntax;
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
  return { ...syntax, addresses };
}

/** Resolves A and AAAA records over DNS-over-HTTPS (Cloudflare's resolver, or the local emulator's). */
export function dohResolver(
  fetcher: typeof fetch = fetch,
  timeoutMs = 3000,
  endpoint = "https://cloudflare-dns.com/dns-query",
): (host: string) => Promise<string[]> {
  return async (host) => {
    const out: string[] = [];
    for (const type of ["A", "AAAA"]) {
      const res = await fetcher(`${endpoint}?name=${encodeURIComponent(host)}&type=${type}`, {
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

/**
 * The policy for this deployment. Production: names resolved over Cloudflare's DNS-over-HTTPS, loopback refused.
 * With dev tools on: loopback allowed; names are resolved by the local DNS emulator when DNS_RESOLVER_URL names it
 * (npm start, the e2e stack), and not resolved at all otherwise (the workerd tests, which stub fetch by name).
 */
export function urlPolicy(
  env: Pick<Env, "DEV_TOOLS" | "APP_ENV" | "APP_ORIGIN" | "DNS_RESOLVER_URL">,
  fetcher: typeof fetch = fetch,
): UrlPolicy {
  const dev = env.DEV_TOOLS === "1" && env.APP_ENV !== "production";
  const ownOrigin = env.APP_ORIGIN;
  if (!dev) return { allowLoopback: false, ownOrigin, resolve: dohResolver(fetcher) };
  return env.DNS_RESOLVER_URL
    ? { allowLoopback: true, ownOrigin, resolve: dohResolver(fetcher, 3000, env.DNS_RESOLVER_URL) }
    : { allowLoopback: true, ownOrigin };
}

export type GuardedFetch =
  | { ok: true; response: Response; url: URL }
  | { ok: false; reason: string; kind: "refused" | "network" | "timeout" };

/**
 * Sends the request under the policy: every hop checked (its name looked up once), at most `maxRedirects`
 * redirects followed by hand. http goes over a socket to a checked address; https through fetch() to the checked
 * name (see the top of this file). `fetchImpl` carries the https requests, and the http ones only where names are
 * not resolved (development). The caller reads (and caps) the body; `maxBodyBytes` caps it on a pinned socket too.
 */
export async function guardedFetch(
  raw: string,
  policy: UrlPolicy,
  init: {
    method?: string;
    headers?: HeadersInit;
    body?: string;
    timeoutMs: number;
    maxRedirects?: number;
    maxBodyBytes?: number;
    fetchImpl?: typeof fetch;
  },
): Promise<GuardedFetch> {
  const {
    timeoutMs,
    maxRedirects = 3,
    maxBodyBytes = 32 * 1024 * 1024,
    fetchImpl = fetch,
    method = "GET",
    ...rest
  } = init;
  const signal = AbortSignal.timeout(timeoutMs);
  let current = raw;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const checked = await checkUrl(current, policy);
    if (!checked.ok) return { ok: false, reason: checked.reason, kind: "refused" };
    let response: Response;
    try {
      response =
        checked.url.protocol === "http:" && checked.addresses
          ? await pinnedHttpRequest(checked.url, checked.addresses, {
              ...rest,
              method,
              signal,
              maxBodyBytes,
              connect: policy.connect,
            })
          : await fetchImpl(checked.url.toString(), { ...rest, method, redirect: "manual", signal });
    } catch (err) {
      const timedOut =
        signal.aborted ||
        (err instanceof PinnedHttpError && err.kind === "timeout") ||
        (err instanceof Error && err.name === "TimeoutError");
      if (timedOut) return { ok: false, reason: "The address did not answer in time.", kind: "timeout" };
      if (err instanceof PinnedHttpError && err.kind !== "network") {
        return { ok: false, reason: err.message, kind: "network" };
      }
      return { ok: false, reason: "The address could not be reached.", kind: "network" };
    }
    const location = response.headers.get("Location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      try {
        current = new URL(location, checked.url).toString();
      } catch {
        return { ok: false, reason: "The address redirected to something that is not a URL.", kind: "refused" };
      }
      continue;
    }
    return { ok: true, response, url: checked.url };
  }
  return { ok: false, reason: "The address redirected too many times.", kind: "refused" };
}
