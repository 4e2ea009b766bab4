import type { Database } from "@db/client";
import { contactMessages } from "@db/schema";
import { escapeHtml, type Mailer } from "@workers/adapters/mail";
import { randomToken } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { RATE_LIMITED_MESSAGE, type RateRule } from "@workers/objects/limits-client";
import { eq } from "drizzle-orm";
import { z } from "zod";
import {
  CONTACT_HONEYPOT,
  CONTACT_INVALID_MESSAGE,
  CONTACT_LIMITS,
  type ContactField,
  type ContactResult,
} from "~/shared/contact";
import { fail, ok } from "~/shared/result";
import { stripControlCharacters } from "~/shared/text";

// The public contact form (/gallery): validate, rate limit per IP and per
// e-mail, store, then e-mail the support address. Invalid or refused input
// changes nothing; a honeypot hit is answered like a success and dropped.

/** At most 5 messages an hour from one IP address, and 5 an hour from one e-mail address. */
export const CONTACT_RULE: RateRule = { name: "contact", limit: 5, windowMs: 60 * 60 * 1000 };

export const CONTACT_FAILED_MESSAGE =
  "We could not send your message just now. Please try again in a few minutes, or write to us by e-mail.";

const contactSchema = z.object({
  name: z
    .string()
    .transform((s) => stripControlCharacters(s).replace(/\s+/g, " ").trim())
    .pipe(
      z
        .string()
        .min(1, "Please enter your name.")
        .max(CONTACT_LIMITS.name, `Please keep your name under ${CONTACT_LIMITS.name} characters.`),
    ),
  email: z
    .string()
    .trim()
    .pipe(
      z.email("Please enter a valid e-mail address.").max(CONTACT_LIMITS.email, "Please enter a valid e-mail address."),
    ),
  message: z
    .string()
    .transform((s) => stripControlCharacters(s.replace(/\r\n/g, "\n")).trim())
    .pipe(
      z
        .string()
        .min(1, "Please write a message.")
        .max(CONTACT_LIMITS.message, `Please keep your message under ${CONTACT_LIMITS.message} characters.`),
    ),
});

export interface ContactDeps {
  db: Database;
  mailer: Mailer;
  supportEmail: string;
  /** Counts one attempt against every key; see rateLimit() in workers/objects/rate-limiter.ts. */
  rateLimit: (keys: string[]) => Promise<{ allowed: boolean; retryAfterSeconds?: number }>;
  ip: string;
  userId?: string | null;
  now?: () => number;
}

function field(form: FormData | Record<string, string>, name: string): string {
  const v = form instanceof FormData ? form.get(name) : form[name];
  return typeof v === "string" ? v : "";
}

export async function submitContactMessage(
  form: FormData | Record<string, string>,
  deps: ContactDeps,
): Promise<ContactResult> {
  const values: Record<ContactField, string> = {
    name: field(form, "name").slice(0, CONTACT_LIMITS.name * 2),
    email: field(form, "email").slice(0, CONTACT_LIMITS.email * 2),
    message: field(form, "message").slice(0, CONTACT_LIMITS.message * 2),
  };
  const parsed = contactSchema.safeParse(values);
  if (!parsed.success) {
    const errors: Partial<Record<ContactField, string>> = {};
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as ContactField;
      errors[key] ??= issue.message;
    }
    return { ...fail<ContactField>("invalid", CONTACT_INVALID_MESSAGE, { fieldErrors: errors }), values };
  }
  const input = parsed.data;

  // A filled honeypot: look like a success, keep nothing.
  if (field(form, CONTACT_HONEYPOT) !== "") return ok({ name: input.name });

  const email = input.email.toLowerCase();
  const limit = await deps.rateLimit([`ip:${deps.ip}`, `email:${email}`]);
  if (!limit.allowed) {
    return fail("rate_limited", RATE_LIMITED_MESSAGE, {
      retryAfterSeconds: Math.max(1, limit.retryAfterSeconds ?? 60),
    });
  }

  const now = deps.now ?? Date.now;
  const id = randomToken();
  await deps.db.insert(contactMessages).values({
    id,
    name: input.name,
    email: input.email,
    message: input.message,
    userId: deps.userId ?? null,
    createdAt: now(),
  });

  try {
    await deps.mailer.send(contactMail(input, deps.supportEmail));
  } catch (err) {
    log.warn("contact: the e-mail to support failed; the message is stored", { messageId: id, err });
    return { ...fail("unavailable", CONTACT_FAILED_MESSAGE), values };
  }
  await deps.db.update(contactMessages).set({ mailedAt: now() }).where(eq(contactMessages.id, id));
  return ok({ name: input.name });
}

export function contactMail(input: { name: string; email: string; message: string }, supportEmail: string) {
  return {
    to: supportEmail,
    replyTo: input.email,
    subject: `Contact form: ${input.name}`,
    text: `From: ${input.name} <${input.email}>\n\n${input.message}\n`,
    html: `<p>From: ${escapeHtml(input.name)} &lt;${escapeHtml(input.email)}&gt;</p><p style="white-space:pre-wrap">${escapeHtml(input.message)}</p>`,
  };
}
