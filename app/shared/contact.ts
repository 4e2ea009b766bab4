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

export type ContactResult =
  | { status: "sent"; name: string }
  | { status: "invalid"; errors: Partial<Record<ContactField, string>>; values: Record<ContactField, string> }
  | { status: "rate_limited"; message: string; retryAfterSeconds: number }
  | { status: "failed"; message: string; values: Record<ContactField, string> };
