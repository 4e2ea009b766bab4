import { env } from "cloudflare:workers";
import type { MailMessage } from "@workers/adapters/mail";
import type { AccountDeps } from "@workers/services/accounts/account-deps";
import { db } from "./factories";

let seq = 0;

/** Account-service dependencies with a recording mailer and a unique client IP. */
export function accountDeps(overrides: Partial<AccountDeps> = {}) {
  const sent: MailMessage[] = [];
  const deferred: Promise<unknown>[] = [];
  const deps: AccountDeps = {
    db,
    env,
    mailer: {
      async send(message) {
        sent.push(message);
      },
    },
    defer: (p) => {
      deferred.push(p);
    },
    ip: `198.51.100.${++seq}-${crypto.randomUUID().slice(0, 8)}`,
    ...overrides,
  };
  return {
    deps,
    sent,
    /** Waits for the work the services left for after the answer (e-mails). */
    flush: () => Promise.all(deferred),
  };
}

export function uniqueEmail(prefix = "acct"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.test`;
}

/** The token in the link of an e-mail. */
export function tokenFrom(message: MailMessage | undefined): string {
  const m = /[?&]token=([a-z2-7]+)/.exec(message?.text ?? "");
  if (!m?.[1]) throw new Error(`no link with a token in: ${message?.text}`);
  return m[1];
}
