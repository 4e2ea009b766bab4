import type { Database } from "@db/client";
import type { Mailer } from "@workers/adapters/mail";
import { log } from "@workers/lib/log";
import type { Failure as SharedFailure } from "~/shared/result";

// What every account service (sign-in, sign-up, verification, password reset, Google) is handed and answers: its
// dependencies, its failure shape, and the e-mail it sends after the answer. Their rate limits: throttle.ts.

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
