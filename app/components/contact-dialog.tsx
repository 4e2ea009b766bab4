import { useEffect, useRef } from "react";
import { useFetcher } from "react-router";
import { CONTACT_HONEYPOT, CONTACT_LIMITS, type ContactResult } from "~/shared/contact";
import { Icon } from "./icons";

export const CONTACT_ACTION = "/gallery?contact=1";

/**
 * The 'Contact Us' button and its 24rem modal. Without JavaScript the button is
 * a link to /gallery?contact=1, where the server renders the dialog already
 * open and the form posts as a plain form; with JavaScript the button opens a
 * modal <dialog> and the form posts in the background.
 */
export function ContactDialog({
  initiallyOpen,
  result: pageResult,
  supportEmail,
}: {
  initiallyOpen: boolean;
  /** The action's answer when the form was posted without JavaScript. */
  result: ContactResult | undefined;
  supportEmail: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const form = useRef<HTMLFormElement>(null);
  const fetcher = useFetcher<ContactResult>({ key: "contact" });
  const result = fetcher.data ?? pageResult;
  const busy = fetcher.state !== "idle";

  // The server rendered an open, non-modal dialog: make it a real modal.
  useEffect(() => {
    const el = dialog.current;
    if (el?.open && !el.matches(":modal")) {
      el.close();
      el.showModal();
    }
  }, []);

  useEffect(() => {
    if (fetcher.state === "idle" && fetcher.data?.ok) form.current?.reset();
  }, [fetcher.state, fetcher.data]);

  const failure = result && !result.ok ? result : undefined;
  const errors = failure?.fieldErrors ?? {};
  const values = failure?.values;
  const describe = (field: "name" | "email" | "message") =>
    errors[field] ? { "aria-invalid": true, "aria-describedby": `contact-${field}-error` } : {};

  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a real link to the no-JavaScript contact page, enhanced into a modal */}
      <a
        href="/gallery?contact=1#contact"
        className="btn-primary fixed right-4 bottom-4 z-30 rounded-full px-5 shadow-lg sm:right-6 sm:bottom-6"
        onClick={(e) => {
          if (!dialog.current) return;
          e.preventDefault();
          dialog.current.showModal();
        }}
      >
        <Icon name="mail" className="h-5 w-5" />
        Contact Us
      </a>
      <dialog
        ref={dialog}
        id="contact"
        open={initiallyOpen}
        aria-labelledby="contact-title"
        className="fixed inset-0 z-50 m-auto h-fit max-h-[90vh] w-[min(100%-2rem,24rem)] overflow-y-auto rounded-2xl border border-line bg-white p-6 text-ink shadow-xl backdrop:bg-slate-900/50"
      >
        <div className="flex items-start justify-between gap-4">
          <h2 id="contact-title" className="text-xl font-bold">
            Contact Us
          </h2>
          <a
            href="/gallery"
            className="btn-ghost -mt-2 -mr-2 min-w-11 px-0 text-lg"
            onClick={(e) => {
              if (!dialog.current) return;
              e.preventDefault();
              dialog.current.close();
            }}
          >
            <span aria-hidden="true">✕</span>
            <span className="sr-only">Close</span>
          </a>
        </div>
        <p className="mt-1 text-sm text-muted">
          Questions, bulk pricing or feedback: we read every message. You can also write to{" "}
          <a className="font-medium text-brand-700 underline" href={`mailto:${supportEmail}`}>
            {supportEmail}
          </a>
          .
        </p>

        <div aria-live="polite" className="mt-4 empty:hidden">
          {result?.ok ? (
            <p className="alert-success" role="status" data-testid="contact-sent">
              Thank you, {result.name}! Your message has been sent. We will reply by e-mail.
            </p>
          ) : null}
          {failure ? (
            <p className="alert-error" role="alert">
              {failure.error}
            </p>
          ) : null}
        </div>

        <fetcher.Form ref={form} method="post" action={CONTACT_ACTION} className="mt-4 space-y-4">
          <div>
            <label htmlFor="contact-name" className="label">
              Name
            </label>
            <input
              id="contact-name"
              name="name"
              autoComplete="name"
              required
              maxLength={CONTACT_LIMITS.name}
              defaultValue={values?.name}
              className="input"
              {...describe("name")}
            />
            {errors.name ? (
              <p id="contact-name-error" className="field-error">
                {errors.name}
              </p>
            ) : null}
          </div>
          <div>
            <label htmlFor="contact-email" className="label">
              Email
            </label>
            <input
              id="contact-email"
              name="email"
              type="email"
              autoComplete="email"
              required
              maxLength={CONTACT_LIMITS.email}
              defaultValue={values?.email}
              className="input"
              {...describe("email")}
            />
            {errors.email ? (
              <p id="contact-email-error" className="field-error">
                {errors.email}
              </p>
            ) : null}
          </div>
          <div>
            <label htmlFor="contact-message" className="label">
              Message
            </label>
            <textarea
              id="contact-message"
              name="message"
              rows={4}
              required
              maxLength={CONTACT_LIMITS.message}
              defaultValue={values?.message}
              className="input resize-y"
              {...describe("message")}
            />
            {errors.message ? (
              <p id="contact-message-error" className="field-error">
                {errors.message}
              </p>
            ) : null}
          </div>
          {/* Honeypot: hidden from people and assistive technology; bots fill it in. */}
          <div
            aria-hidden="true"
            style={{ position: "absolute", left: "-10000px", width: 1, height: 1, overflow: "hidden" }}
          >
            <label htmlFor="contact-website">Website</label>
            <input id="contact-website" name={CONTACT_HONEYPOT} type="text" tabIndex={-1} autoComplete="off" />
          </div>
          <button type="submit" className="btn-primary w-full" disabled={busy}>
            {busy ? "Sending…" : "Send Message"}
          </button>
        </fetcher.Form>
      </dialog>
    </>
  );
}
