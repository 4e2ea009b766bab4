import { join, resolve } from "node:path";

// What wrangler.toml says about one deployed environment, and what in it would make a deploy wrong at the edge
// (scripts/deploy.ts refuses it). Read through wrangler's own reader: what `wrangler deploy` applies.
//
// - The environment is served on a route (a custom domain or a zone route), with `workers_dev = false` written out:
//   on a workers.dev address the edge cache (`caches.default`) does nothing, so the landing figures' hourly answer
//   and the public pages' cached answers would be recomputed per request (docs/decisions/0185, 0132, 0231).
// - The environments' PROVIDER_CAP together stay within the provider account's allowance: each environment's gate
//   counts only its own calls (docs/decisions/0186, 0230; README.md, "The provider's capacity").
// - The Worker's CPU limit is written out (`[limits] cpu_ms`) and is at most the platform's default of 30 s, never the
//   paid maximum of 5 minutes: no request path needs more (a label costs the Worker a few ms since ADR 0250), and a
//   runaway request is stopped at the default rather than billed for five minutes.

export const ROOT = resolve(import.meta.dirname, "..");
export const ENVIRONMENTS = ["staging", "production"] as const;
export type DeployEnv = (typeof ENVIRONMENTS)[number];
const PLACEHOLDER_DB = /^0{8}-0{4}-0{4}-0{4}-0{12}$/;
const PLACEHOLDER_HOST = /example\.(com|org|net)\b/;

/**
 * The provider account's allowance of calls in flight, which the environments' PROVIDER_CAP split. The provider
 * documents no limit (../shared/spec/provider-api.md); this is the figure the product has run with since ADR 0186.
 * Replace it with the number the provider states for the account (README.md, "The provider's capacity").
 */
export const PROVIDER_ALLOWANCE = 16;

/** Workers Paid's default CPU limit per request (ms); `cpu_ms` may go up to 300,000, which the deploy refuses. */
export const DEFAULT_CPU_MS = 30_000;

/** What wrangler.toml says about one environment. */
export interface Target {
  env: DeployEnv;
  worker: string;
  origin: string;
  database: { binding: string; name: string; id: string };
  bucket: string;
  /** Settings that still hold the committed placeholders: a real deploy refuses them. */
  placeholders: string[];
  /** What else a real deploy refuses: no route, workers.dev left on, provider shares above the allowance. */
  refusals: string[];
}

interface Route {
  pattern: string;
  custom_domain?: boolean;
}

type Read = {
  name?: string;
  vars: Record<string, unknown>;
  d1_databases: { binding: string; database_name?: string; database_id?: string }[];
  r2_buckets: { bucket_name?: string }[];
  routes?: (string | Route)[];
  route?: string | Route;
  workers_dev?: boolean;
  limits?: { cpu_ms?: number };
};

async function read(configPath: string, env: DeployEnv): Promise<Read> {
  const { unstable_readConfig } = await import("wrangler");
  return unstable_readConfig({ config: configPath, env }, { hideWarnings: true }) as unknown as Read;
}

/** Reads wrangler.toml for one environment. */
export async function readTarget(env: DeployEnv, configPath = join(ROOT, "wrangler.toml")): Promise<Target> {
  const c = await read(configPath, env);
  const vars = c.vars as Record<string, string>;
  const db = c.d1_databases.find((d) => d.binding === "DB");
  if (!db?.database_name || !db.database_id) throw new Error(`[env.${env}] has no D1 database bound as DB`);
  const placeholders: string[] = [];
  if (PLACEHOLDER_DB.test(db.database_id)) placeholders.push("d1_databases.database_id");
  for (const k of ["APP_ORIGIN", "SUPPORT_EMAIL", "MAIL_FROM"]) {
    if (PLACEHOLDER_HOST.test(vars[k] ?? "example.com")) placeholders.push(`vars.${k}`);
  }
  const routes = routesOf(c);
  if (routes.some((r) => PLACEHOLDER_HOST.test(r))) placeholders.push("routes");
  const origin = (vars.APP_ORIGIN ?? "").replace(/\/$/, "");
  return {
    env,
    worker: c.name ?? "",
    origin,
    database: { binding: db.binding, name: db.database_name, id: db.database_id },
    bucket: c.r2_buckets[0]?.bucket_name ?? "",
    placeholders,
    refusals: [...edgeRefusals(env, c, origin), ...cpuRefusals(env, c), ...(await providerShareRefusals(configPath))],
  };
}

function routesOf(c: Read): string[] {
  const all = [...(c.routes ?? []), ...(c.route ? [c.route] : [])];
  return all.map((r) => (typeof r === "string" ? r : r.pattern));
}

/** The environment answers on a route of its own, and not on workers.dev, where the edge cache does nothing. */
export function edgeRefusals(env: DeployEnv, c: Pick<Read, "routes" | "route" | "workers_dev">, origin: string) {
  const out: string[] = [];
  const routes = routesOf(c as Read);
  if (routes.length === 0) {
    out.push(
      `[env.${env}] has no route: add its custom domain (routes = [{ pattern = "<host>", custom_domain = true }]); ` +
        'on workers.dev the edge cache does nothing (README.md, "First deploy")',
    );
  } else {
    const host = hostOf(origin);
    if (host && !routes.some((r) => r === host || r.startsWith(`${host}/`))) {
      out.push(`[env.${env}] has no route for APP_ORIGIN's host ${host} (routes: ${routes.join(", ")})`);
    }
  }
  if (c.workers_dev !== false) {
    out.push(`[env.${env}] must say workers_dev = false: the Worker is served on its route, not on workers.dev`);
  }
  return out;
}

/** The CPU limit written out, and at most the default (docs/decisions/0250-labels-drawn-by-images.md). */
export function cpuRefusals(env: DeployEnv, c: Pick<Read, "limits">): string[] {
  const ms = c.limits?.cpu_ms;
  if (ms === undefined) return [`[env.${env}] has no [limits] cpu_ms: write the default, cpu_ms = ${DEFAULT_CPU_MS}`];
  if (!Number.isInteger(ms) || ms < 1 || ms > DEFAULT_CPU_MS) {
    return [
      `[env.${env}] limits.cpu_ms is ${ms}: at most the default ${DEFAULT_CPU_MS} (no request path needs more; ` +
        "the paid maximum would let a runaway request spend five minutes)",
    ];
  }
  return [];
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

/** The environments' PROVIDER_CAP, each a share of one account's allowance, together within it. */
export async function providerShareRefusals(configPath: string, allowance = PROVIDER_ALLOWANCE): Promise<string[]> {
  const shares: string[] = [];
  let sum = 0;
  for (const env of ENVIRONMENTS) {
    const cap = Number((await read(configPath, env)).vars.PROVIDER_CAP);
    if (!Number.isInteger(cap) || cap < 1) return [`[env.${env}.vars] PROVIDER_CAP is not a whole number above 0`];
    shares.push(`${env} ${cap}`);
    sum += cap;
  }
  if (sum <= allowance) return [];
  return [
    `the environments' PROVIDER_CAP add up to ${sum} (${shares.join(", ")}), above the provider account's allowance ` +
      `of ${allowance} (README.md, "The provider's capacity")`,
  ];
}
