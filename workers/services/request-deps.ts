import type { Database } from "@db/client";
import type { Mailer } from "@workers/adapters/mail";
import type { Images } from "@workers/lib/images";
import type { RateRule } from "@workers/objects/limits-client";
import type Stripe from "stripe";

/**
 * Everything a service may reach for one request, built once per request in
 * workers/http/build-deps.ts and handed to Hono routes and React Router loaders and
 * actions alike. A service takes the part it needs (`Pick<Deps, "db" | ...>`),
 * so tests pass their own fakes.
 */
export interface Deps {
  env: Env;
  db: Database;
  /** R2: photo originals, thumbnails, versions, uploads. */
  bucket: R2Bucket;
  /** Pixel work (thumbnails) through the Images binding, never on this isolate (workers/lib/images.ts). */
  readonly images: Images;
  mailer: Mailer;
  /** Stripe, made on first use (most requests never call it). */
  readonly stripe: Stripe;
  /** Our absolute origin without a trailing slash, for links in e-mails and Stripe return addresses. */
  origin: string;
  /** Counts one attempt against every key; `allowed` is false when any is over the rule. */
  rateLimit: (
    rule: RateRule,
    keys: (string | null | undefined)[],
  ) => Promise<{ allowed: boolean; retryAfterSeconds: number }>;
  /** The client's address, for per-IP limits. */
  ip: string;
  /** Runs work after the answer has gone out (ctx.waitUntil). */
  defer: (work: Promise<unknown>) => void;
  clock: () => number;
}
