import type { Database } from "@db/client";
import type { Mailer } from "@workers/adapters/mail";
import { log } from "@workers/lib/log";
import { peekLimit, RATE_LIMITED_MESSAGE, type RateRule, rateLimit } from "@workers/objects/client";
import type { Failure as SharedFailure } from "~/shared/result";

/** What every account service needs; routes build it per request, tests pass their own. */
export interface AccountDeps {
  db: Database;
  /** Rate limiter and user Durable Objects, APP_ORIGIN, SIGNUP_CREDITS. */
  env: Env;
  mailer: Mailer;
  /**
   * Runs work after the answer has been sent (ctx.waitUntil). E-mails go out
   * this way, so an answer takes the same time whether or not an account exists.
   */
  defer: (work: Promise<unknown>) => void;
  /** The client's address, for per-IP rate limits. */
  ip: string;
  now?: number;
  /** Waits before answering (slowing guesses at one account); tests pass their own. */
  sleep?: (ms: number) => Promise<void>;
}

export type FieldErrors<F extends string> = Partial<Record<F, string>>;

/** The one failure shape (app/shared/result.ts); `needsVerification` is set when the password was right but the address is not verified yet. */
export type Failure<F extends string = never> = SharedFailure<F> & {
  needsVerification?: boolean;
  /** Every message belongs to a field: the form shows them beside the fields, not above. */
  fieldsOnly?: boolean;
};

/** Field errors as a failure: the message is the first field's, shown beside that field. */
export function invalidFields<F extends string>(fieldErrors: FieldErrors<F>): Failure<F> {
  const first = Object.values<string | undefined>(fieldErrors).find(Boolean) ?? "Please check the highlighted fields.";
  return { ok: false, code: "invalid", error: first, fieldErrors, fieldsOnly: true };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Attempts allowed per e-mail address and per client IP, counted in a Durable
 * Object so every isolate sees the same count (docs/decisions/0014-abuse-controls.md).
 */
export const LIMITS = {
  signIn: {
    // Failures, not attempts (docs/decisions/0104-sign-in-throttling.md): the pair is refused, the address is slowed.
    email: { name: "signin:fail:email", limit: 10, windowMs: 15 * MINUTE },
    ip: { name: "signin:ip", limit: 100, windowMs: 15 * MINUTE },
  },
  signUp: {
    email: { name: "signup:email", limit: 5, windowMs: HOUR },
    ip: { name: "signup:ip", limit: 20, windowMs: HOUR },
  },
  reset: {
    email: { name: "reset:email", limit: 5, windowMs: HOUR },
    ip: { name: "reset:ip", limit: 20, windowMs: HOUR },
  },
  resend: {
    email: { name: "resend:email", limit: 5, windowMs: HOUR },
    ip: { name: "resend:ip", limit: 20, windowMs: HOUR },
  },
} satisfies Record<string, { email: RateRule; ip: RateRule }>;

/** Sign-in failures one client may make at one address in 15 minutes before that pair is refused. */
export const SIGN_IN_PAIR_RULE: RateRule = { name: "signin:fail:pair", limit: 10, windowMs: 15 * MINUTE };
/** The wait added to every sign-in at an address with more failures than LIMITS.signIn.email allows. */
export const SIGN_IN_SLOWDOWN_MS = 2_000;

/**
 * Sign-in throttling that slows guessing without letting a stranger lock an
 * account: attempts are counted per IP (refused over the limit), failures per
 * address and client IP (that pair is refused), and failures per address from
 * anywhere (every attempt at that address then waits SIGN_IN_SLOWDOWN_MS, and a
 * right password still signs in).
 */
export async function signInGate(
  deps: Pick<AccountDeps, "env" | "ip" | "sleep">,
  email: string,
): Promise<Failure | null> {
  const [byIp, pair, address] = await Promise.all([
    rateLimit(deps.env, LIMITS.signIn.ip, [deps.ip]),
    peekLimit(deps.env, SIGN_IN_PAIR_RULE, `${email}|${deps.ip}`),
    peekLimit(deps.env, LIMITS.signIn.email, email),
  ]);
  if (!byIp.allowed || pair.count >= SIGN_IN_PAIR_RULE.limit) {
    return {
      ok: false,
      code: "rate_limited",
      error: RATE_LIMITED_MESSAGE,
      retryAfterSeconds: byIp.allowed ? pair.retryAfterSeconds : byIp.retryAfterSeconds,
    };
  }
  if (address.count >= LIMITS.signIn.email.limit) {
    await (deps.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms))))(SIGN_IN_SLOWDOWN_MS);
  }
  return null;
}

/** Records a failed sign-in against the address and the address+client pair. */
export async function countSignInFailure(deps: Pick<AccountDeps, "env" | "ip">, email: string): Promise<void> {
  await Promise.all([
    rateLimit(deps.env, SIGN_IN_PAIR_RULE, [`${email}|${deps.ip}`]),
    rateLimit(deps.env, LIMITS.signIn.email, [email]),
  ]);
}

/** Counts one attempt per e-mail and per IP; a Failure with 429 when either is over. */
export async function checkLimits(
  deps: Pick<AccountDeps, "env" | "ip">,
  rules: { email: RateRule; ip: RateRule },
  email: string,
): Promise<Failure | null> {
  const [byEmail, byIp] = await Promise.all([
    rateLimit(deps.env, rules.email, [email]),
    rateLimit(deps.env, rules.ip, [deps.ip]),
  ]);
  if (byEmail.allowed && byIp.allowed) return null;
  return {
    ok: false,
    code: "rate_limited",
    error: RATE_LIMITED_MESSAGE,
    retryAfterSeconds: Math.max(byEmail.retryAfterSeconds, byIp.retryAfterSeconds),
  };
}

/**
 * Issues a link and e-mails it after the answer has gone out, so the answer
 * takes the same time whether or not an account exists. A failure is logged,
 * never shown (showing it would tell who has an account).
 */
export function deliverLater(
  deps: Pick<AccountDeps, "mailer" | "defer">,
  what: string,
  compose: () => Promise<Parameters<Mailer["send"]>[0] | null>,
): void {
  deps.defer(
    compose()
      .then((message) => (message ? deps.mailer.send(message) : undefined))
      .catch((err: unknown) => {
        log.error("account e-mail not sent", { what, err, where: "mail" });
      }),
  );
}
