import { keyringProblems } from "@workers/lib/signing-keys";
import { z } from "zod";

// The Worker's configuration, checked once per isolate before the first
// request is served (workers/app.ts). Binding and variable types come from
// `npm run types` (wrangler types: wrangler.toml plus the names in
// .dev.vars.example) into workers/worker-configuration.d.ts; the settings
// that only a local or test run sets are typed from OPTIONAL_SETTINGS below.
// Nothing here is kept by hand twice.

/** Settings a deployed worker may leave unset: local emulator addresses and tuning. */
export const OPTIONAL_SETTINGS = [
  "MAIL_API_URL",
  "PROVIDER_BASE_URL",
  "PROVIDER_TIMEOUT_MS",
  "STRIPE_API_URL",
  "GOOGLE_ISSUER_URL",
  "HEALTH_PROBE_SECRET",
  "DNS_RESOLVER_URL",
  // The local images emulator, which draws the disclosure label where the Images stand-in cannot (ADR 0250).
  "IMAGES_LOCAL_URL",
  // The signing key before key ids (key "0"): verifies what it signed, signs only when SIGNING_KEYS is unset.
  "SIGNING_SECRET",
  // Error reporting (workers/lib/error-reporting.ts): off when SENTRY_DSN is unset.
  "SENTRY_DSN",
  "SENTRY_ENVIRONMENT",
  "SENTRY_RELEASE",
] as const;
export type OptionalSettings = { [K in (typeof OPTIONAL_SETTINGS)[number]]?: string };

const secret = z.string().min(1, "is not set");
const url = z.url({ message: "must be an absolute URL" });
const integer = (min: number, max: number) =>
  z.string().regex(/^\d+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(min).max(max));

const common = z.object({
  APP_ENV: z.enum(["production", "development", "test"]),
  APP_ORIGIN: url,
  SUPPORT_EMAIL: z.email(),
  MAIL_FROM: z.string().min(3),
  SIGNUP_CREDITS: integer(0, 1000),
  /** The most provider calls in flight for the whole product (workers/objects/provider-gate-object.ts). */
  PROVIDER_CAP: integer(1, 10_000),
  DEV_TOOLS: z.enum(["0", "1"]),
  MAIL_API_KEY: secret,
  PROVIDER_API_KEY: secret,
  // Checked together below (signing-keys.ts): SIGNING_KEYS, or the older SIGNING_SECRET alone.
  SIGNING_KEYS: z.string().optional(),
  SIGNING_SECRET: z.string().optional(),
  STRIPE_SECRET_KEY: secret,
  STRIPE_WEBHOOK_SECRET: secret,
  GOOGLE_CLIENT_ID: secret,
  GOOGLE_CLIENT_SECRET: secret,
  MAIL_API_URL: url.optional(),
  PROVIDER_BASE_URL: url.optional(),
  PROVIDER_TIMEOUT_MS: integer(1_000, 600_000).optional(),
  STRIPE_API_URL: url.optional(),
  GOOGLE_ISSUER_URL: url.optional(),
  HEALTH_PROBE_SECRET: z.string().min(16).optional(),
  /** The DNS-over-HTTPS endpoint the SSRF guard asks (the local DNS emulator); production always asks Cloudflare's. */
  DNS_RESOLVER_URL: url.optional(),
  /** The local images emulator (emulators/images-draw.ts): draws labels where the Images stand-in cannot. */
  IMAGES_LOCAL_URL: url.optional(),
  SENTRY_DSN: url.optional(),
});

/** A deployed worker: every secret real, no emulator address, no dev tools. */
const production = common.extend({
  APP_ORIGIN: url.refine((v) => v.startsWith("https://"), "must be https"),
  DEV_TOOLS: z.literal("0", { message: "must be 0 in production" }),
  PROVIDER_BASE_URL: url.refine((v) => v.startsWith("https://"), "must be https"),
  STRIPE_WEBHOOK_SECRET: z.string().startsWith("whsec_", "must start with whsec_"),
  // The deploy's smoke check (scripts/deploy.ts) needs the deep probe, which answers only to this secret.
  HEALTH_PROBE_SECRET: z.string({ message: "is not set (the deploy's smoke check needs it)" }).min(16),
  SENTRY_DSN: url.refine((v) => v.startsWith("https://"), "must be https").optional(),
  MAIL_API_URL: z.undefined({ message: "is a local emulator address; unset it in production" }).optional(),
  STRIPE_API_URL: z.undefined({ message: "is a local emulator address; unset it in production" }).optional(),
  GOOGLE_ISSUER_URL: z.undefined({ message: "is a local emulator address; unset it in production" }).optional(),
  DNS_RESOLVER_URL: z.undefined({ message: "is a local emulator address; unset it in production" }).optional(),
  IMAGES_LOCAL_URL: z.undefined({ message: "is a local emulator address; unset it in production" }).optional(),
});

/** Every signing key well formed, and at least one; a deployed worker's at least 32 characters each. */
function withSigningKeys<T extends z.ZodType<{ SIGNING_KEYS?: string; SIGNING_SECRET?: string }>>(
  schema: T,
  minLength: number,
) {
  return schema.superRefine((env, ctx) => {
    for (const message of keyringProblems(env, minLength)) ctx.addIssue({ code: "custom", message, path: [] });
  });
}
const schemas = { production: withSigningKeys(production, 32), other: withSigningKeys(common, 1) };

export type Config = z.output<typeof common>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`The Worker's configuration is incomplete: ${problems.join("; ")}`);
  }
}

/** Checks the environment: production requires every secret; a local or test run only what it uses. */
export function parseConfig(env: Record<string, unknown>): Config {
  const schema = env.APP_ENV === "production" ? schemas.production : schemas.other;
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data as Config;
  throw new ConfigError(
    parsed.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")} ${i.message}` : i.message)),
  );
}

const checked = new WeakMap<object, Config>();

/** The checked configuration of this environment object (parsed once per isolate). */
export function config(env: Env): Config {
  let c = checked.get(env);
  if (!c) {
    c = parseConfig(env as unknown as Record<string, unknown>);
    checked.set(env, c);
  }
  return c;
}
