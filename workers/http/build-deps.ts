import { createDb } from "@db/client";
import { createMailer } from "@workers/adapters/mail";
import { createStripe } from "@workers/adapters/stripe";
import { type Images, imagesFor } from "@workers/lib/images";
import { clientIp, rateLimit } from "@workers/objects/limits-client";
import type { Deps } from "@workers/services/request-deps";
import type Stripe from "stripe";

/** The one place a request's dependencies are built (workers/app.ts for pages, the /api middleware for Hono). */
export function buildDeps(env: Env, ctx: Pick<ExecutionContext, "waitUntil">, request: Request): Deps {
  let stripe: Stripe | undefined;
  let images: Images | undefined;
  return {
    env,
    db: createDb(env.DB),
    bucket: env.PHOTOS,
    // Made on first use, as stripe is: most requests make no thumbnail.
    get images() {
      images ??= imagesFor(env);
      return images;
    },
    mailer: createMailer(env),
    get stripe() {
      stripe ??= createStripe(env);
      return stripe;
    },
    origin: env.APP_ORIGIN.replace(/\/$/, ""),
    rateLimit: (rule, keys) => rateLimit(env, rule, keys),
    ip: clientIp(request),
    defer: (work) => ctx.waitUntil(work),
    clock: () => Date.now(),
  };
}
