// Bindings and variables of the Worker. Secrets (set with `wrangler secret put`)
// are optional here because a local run may leave them unset.
declare namespace Cloudflare {
  interface Env {
    DB: D1Database;
    PHOTOS: R2Bucket;
    USER_OBJECT: DurableObjectNamespace<import("@workers/objects/user-object").UserObject>;
    RATE_LIMITER: DurableObjectNamespace<import("@workers/objects/rate-limiter").RateLimiter>;

    APP_ENV: string;
    APP_ORIGIN: string;
    SUPPORT_EMAIL: string;
    MAIL_FROM: string;
    SIGNUP_CREDITS: string;
    DEV_TOOLS: string;

    MAIL_API_URL?: string;
    MAIL_API_KEY?: string;
    PROVIDER_BASE_URL?: string;
    PROVIDER_API_KEY?: string;
    /** Milliseconds before a provider call is abandoned (default 120 000). */
    PROVIDER_TIMEOUT_MS?: string;
    /** HMAC key of the short-lived signed image addresses given to the provider. */
    SIGNING_SECRET?: string;
    STRIPE_SECRET_KEY?: string;
    STRIPE_WEBHOOK_SECRET?: string;
    STRIPE_API_URL?: string;
    GOOGLE_CLIENT_ID?: string;
    GOOGLE_CLIENT_SECRET?: string;
    GOOGLE_ISSUER_URL?: string;
    SESSION_SECRET?: string;
  }
}

interface Env extends Cloudflare.Env {}
