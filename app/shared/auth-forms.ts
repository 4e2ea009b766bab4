// Shared by forms and their actions (isomorphic: no server code here).

/** A field people never see or fill; bots that fill every input do (docs/decisions/0014-abuse-controls.md). */
export const HONEYPOT_FIELD = "website";

export type AuthIntent = "signin" | "signup" | "forgot" | "resend";

export interface AuthActionData {
  intent: AuthIntent;
  error?: string;
  message?: string;
  fieldErrors?: Partial<Record<"name" | "email" | "password" | "acceptTerms", string>>;
  /** What the visitor typed, to fill the form again (never the password). */
  values: { name: string; email: string };
  needsVerification?: boolean;
  /** The error repeats a field's message: show it beside the field only. */
  fieldsOnly?: boolean;
  signedUp?: boolean;
}
