import type { InputHTMLAttributes } from "react";
import { HONEYPOT_FIELD } from "~/shared/auth-forms";

/** A labelled input with its error next to it (aria-invalid, aria-describedby). */
export function TextField({
  id,
  label,
  error,
  hint,
  ...input
}: { id: string; label: string; error?: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>) {
  const described = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(" ");
  return (
    <div>
      <label className="label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        className="input"
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
        {...input}
      />
      {hint ? (
        <p id={`${id}-hint`} className="mt-1 text-sm text-muted">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** Off-screen field that people never fill and many bots do. */
export function Honeypot() {
  return (
    <div
      aria-hidden="true"
      style={{ position: "absolute", left: "-10000px", width: "1px", height: "1px", overflow: "hidden" }}
    >
      <label htmlFor={`${HONEYPOT_FIELD}-field`}>Leave this field empty</label>
      <input id={`${HONEYPOT_FIELD}-field`} name={HONEYPOT_FIELD} type="text" tabIndex={-1} autoComplete="off" />
    </div>
  );
}

export function Alert({ kind, children }: { kind: "error" | "success"; children: React.ReactNode }) {
  return kind === "error" ? (
    <div role="alert" className="alert-error">
      {children}
    </div>
  ) : (
    <div role="status" className="alert-success">
      {children}
    </div>
  );
}
