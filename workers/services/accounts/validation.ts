import { z } from "zod";
import { FIELD_MESSAGES as M } from "~/shared/account-messages";
import { cutText, hasControlCharacters } from "~/shared/text";
import type { FieldErrors } from "./account-deps";

// Server-side rules for the account forms. Passwords: 8 to 128 characters and
// nothing else (NIST 800-63B; docs/product.md, "Accounts").
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** Input from a form: a missing field and an empty one are the same. */
const text = z.preprocess((v) => (typeof v === "string" ? v : ""), z.string());

export const emailField = text.pipe(
  z
    .string()
    .trim()
    .toLowerCase()
    .min(1, M.emailRequired)
    .max(254, M.emailInvalid)
    .pipe(z.email({ error: M.emailInvalid })),
);

export const newPasswordField = text.pipe(
  z.string().min(1, M.passwordRequired).min(PASSWORD_MIN, M.passwordTooShort).max(PASSWORD_MAX, M.passwordTooLong),
);

/** A sign-in password is only checked for presence: its length says nothing useful. */
export const passwordField = text.pipe(z.string().min(1, M.passwordRequired));

export const nameField = text.pipe(
  z
    .string()
    .trim()
    .max(100, M.nameTooLong)
    .refine((s) => !hasControlCharacters(s), M.nameInvalid),
);

export const signUpSchema = z.object({
  name: nameField,
  email: emailField,
  password: newPasswordField,
  acceptTerms: z.preprocess((v) => v === "on" || v === true || v === "true", z.literal(true, { error: M.terms })),
});

export const signInSchema = z.object({ email: emailField, password: passwordField });

export type SignUpInput = z.input<typeof signUpSchema>;

export function fieldErrors<F extends string>(error: z.ZodError): FieldErrors<F> {
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = String(issue.path[0] ?? "form");
    out[key] ??= issue.message;
  }
  return out as FieldErrors<F>;
}

/** The part of an address before the @, used as a name when none is given. */
export function nameFromEmail(email: string): string {
  return cutText(email.split("@")[0] ?? email, 100);
}
