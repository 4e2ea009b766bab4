import { peekLimit, RATE_LIMITED_MESSAGE, type RateRule, rateLimit } from "@workers/objects/limits-client";
import type { AccountDeps, Failure } from "./account-deps";

// How often account services may be asked, per address and per client: sign-in throttling and the limits on
// sign-up, reset and resend (docs/decisions/0014-abuse-controls.md, 0104-sign-in-throttling.md).

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
