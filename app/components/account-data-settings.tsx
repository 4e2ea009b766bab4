import { Form } from "react-router";
import { LAW_SENTENCE } from "~/shared/mls-profiles";

// Settings sections of issue 16: "export my data" and account deletion (docs/decisions/0112); the account's
// deletion warns first when it closes original pages of listings that still advertise (docs/decisions/0170).

/** How this account can prove it is its owner before deletion, and until when a Google confirmation counts. */
export interface DeletionOptions {
  password: boolean;
  google: boolean;
  googleConfirmedUntil: number | null;
}

export function AccountDataSection({
  busy,
  deletion,
  advertisedPages,
}: {
  busy: boolean;
  deletion: DeletionOptions;
  /** Live original pages of listings that still advertise: the deletion closes them. */
  advertisedPages: number;
}) {
  return (
    <section className="card mt-6" aria-labelledby="data-title">
      <h2 id="data-title" className="text-lg font-semibold">
        Your data
      </h2>
      <Form method="post" className="mt-3">
        <input type="hidden" name="intent" value="export" />
        <p className="text-sm text-muted">
          A ZIP of all your originals and versions with your account, folders, jobs and credit history (JSON). We
          prepare it in the background and e-mail you a link valid for 24 hours.
        </p>
        <button type="submit" className="btn-secondary mt-2" disabled={busy}>
          Export my data
        </button>
      </Form>
      <div className="mt-6 border-t border-line pt-4">
        <h3 className="font-semibold text-red-700">Delete my account</h3>
        <p className="text-sm text-muted">
          Cancels your subscription, deletes every photo and version, stops your original-page links and signs you out
          everywhere. Payment and credit records are kept without your name or e-mail, as accounting requires. This
          cannot be undone.
        </p>
        {advertisedPages > 0 ? (
          <p className="alert-error mt-2 text-sm" role="alert" data-testid="delete-closes-originals">
            Deleting your account closes{" "}
            {advertisedPages === 1 ? "1 public original page" : `${advertisedPages} public original pages`} of listings
            you have not marked sold. {LAW_SENTENCE} Mark those listings sold first, or delete anyway.
          </p>
        ) : null}
        {deletion.googleConfirmedUntil !== null ? (
          <Form method="post" className="mt-2" data-testid="delete-account-google-form">
            <input type="hidden" name="intent" value="delete" />
            <input type="hidden" name="confirm" value="google" />
            <p className="alert-success text-sm" role="status">
              Google confirmed it is you. This confirmation works once, for 5 minutes (until{" "}
              {new Date(deletion.googleConfirmedUntil).toISOString().slice(11, 16)} UTC).
            </p>
            <button type="submit" className="btn-danger mt-2" disabled={busy}>
              Delete my account
            </button>
          </Form>
        ) : (
          <>
            {deletion.password ? (
              <Form method="post" className="mt-2" data-testid="delete-account-form">
                <input type="hidden" name="intent" value="delete" />
                <label className="block">
                  <span className="text-sm font-medium">Your password</span>
                  <input
                    name="password"
                    type="password"
                    autoComplete="current-password"
                    className="input mt-1 w-full"
                    required
                  />
                </label>
                <button type="submit" className="btn-danger mt-2" disabled={busy}>
                  Delete my account
                </button>
              </Form>
            ) : null}
            {deletion.google ? (
              // A document form: the answer is a redirect to Google.
              <Form method="post" reloadDocument className="mt-3" data-testid="delete-account-reauth-form">
                <input type="hidden" name="intent" value="reauth-google" />
                <p className="text-sm text-muted">
                  {deletion.password
                    ? "Or confirm it is you with Google instead of your password."
                    : "Your account signs in with Google: confirm it is you with Google, then delete it."}
                </p>
                <button type="submit" className="btn-secondary mt-2" disabled={busy}>
                  Confirm with Google
                </button>
              </Form>
            ) : null}
          </>
        )}
      </div>
    </section>
  );
}
