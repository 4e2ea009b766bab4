import type { Failure, Ok } from "./result";

// Bounds of the public contact form, shared by the form's HTML attributes and
// the server's validation (workers/services/contact.ts).

export const CONTACT_LIMITS = {
  name: 100,
  email: 254,
  message: 5000,
} as const;

/** The honeypot's field name: people never see it, naive bots fill it in. */
export const CONTACT_HONEYPOT = "website";

export type ContactField = "name" | "email" | "message";

/** The alert above the form when fields are wrong; each field's own message stands beside it. */
export const CONTACT_INVALID_MESSAGE = "Please correct the fields marked below.";

/**
 * The contact form's answer in the one result shape (app/shared/result.ts):
 * sent (with the sender's name), or refused with a code and a message
 * (invalid with per-field messages, rate_limited with retryAfterSeconds,
 * unavailable when the e-mail to support failed). `values` gives the form back
 * what was typed, when the service read it.
 */
export type ContactResult = Ok<{ name: string }> | (Failure<ContactField> & { values?: Record<ContactField, string> });
