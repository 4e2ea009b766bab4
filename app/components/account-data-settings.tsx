import { Form } from "react-router";
import {
  CORNER_NAMES,
  LABEL_CORNERS,
  LABEL_SIZES,
  LABEL_TEXT_MAX,
  LABEL_TONES,
  type LabelDefaults,
} from "~/shared/label-options";

// Settings sections of issue 16: the disclosure label's defaults, "export my
// data" and account deletion (docs/decisions/0110, 0112).

export function LabelSettingsSection({ defaults, busy }: { defaults: LabelDefaults; busy: boolean }) {
  return (
    <section className="card mt-6" aria-labelledby="label-title">
      <h2 id="label-title" className="text-lg font-semibold">
        Disclosure label
      </h2>
      <p className="mt-1 text-sm text-muted">
        Staged photos you download carry this label in a corner, with a QR code that opens a page showing the original
        beside the staged version (what California's AB 723 and MLS rules ask for). Originals are never labelled.
      </p>
      <Form method="post" className="mt-4 grid gap-3 sm:grid-cols-2" data-testid="label-form">
        <input type="hidden" name="intent" value="label" />
        <label className="flex items-center gap-2 sm:col-span-2">
          <input type="checkbox" name="enabled" defaultChecked={defaults.enabled} /> Label downloads by default
        </label>
        <label className="sm:col-span-2">
          <span className="text-sm font-medium">Text</span>
          <input
            name="text"
            className="input mt-1 w-full"
            defaultValue={defaults.text}
            maxLength={LABEL_TEXT_MAX}
            required
          />
        </label>
        <label>
          <span className="text-sm font-medium">Corner</span>
          <select name="corner" className="input mt-1 w-full" defaultValue={defaults.corner}>
            {LABEL_CORNERS.map((c) => (
              <option key={c} value={c}>
                {CORNER_NAMES[c]}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="text-sm font-medium">Size</span>
          <select name="size" className="input mt-1 w-full" defaultValue={defaults.size}>
            {LABEL_SIZES.map((s) => (
              <option key={s} value={s}>
                {s[0]?.toUpperCase()}
                {s.slice(1)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="text-sm font-medium">Style</span>
          <select name="tone" className="input mt-1 w-full" defaultValue={defaults.tone}>
            {LABEL_TONES.map((t) => (
              <option key={t} value={t}>
                {t === "dark" ? "Dark box, white text" : "Light box, dark text"}
              </option>
            ))}
          </select>
        </label>
        <label className="flex items-center gap-2 self-end">
          <input type="checkbox" name="qr" defaultChecked={defaults.qr} /> QR code to the original
        </label>
        <div className="sm:col-span-2">
          <button type="submit" className="btn-primary" disabled={busy}>
            Save label
          </button>
        </div>
      </Form>
    </section>
  );
}

/** How this account can prove it is its owner before deletion, and until when a Google confirmation counts. */
export interface DeletionOptions {
  password: boolean;
  google: boolean;
  googleConfirmedUntil: number | null;
}

export function AccountDataSection({ busy, deletion }: { busy: boolean; deletion: DeletionOptions }) {
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
