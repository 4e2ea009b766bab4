import { useCallback, useEffect, useState } from "react";
import { api, type DisclosureView } from "~/lib/api";
import { CONFIRM_CHECKED, STRUCTURE_CONFIRMED } from "~/shared/version-view";

// A version's way to the MLS (docs/decisions/0110-mls-disclosure-and-original-pages.md, 0170-mls-profiles.md):
// what its listing's profile makes of it (caption, label, or why it may not go out), Download for MLS, and its
// public original page (/o/<token>), published or withdrawn. Nothing is published by a download that does not say
// so: the first Download for MLS of a profile whose label gives the original's address is a form that says it
// publishes the page; after a withdrawal the page must be published again on purpose. Withdrawing a page of a
// listing that still advertises asks first and says why.

export function OriginalLinkControls({ photoId, versionId }: { photoId: string; versionId: string }) {
  const [view, setView] = useState<DisclosureView | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [warning, setWarning] = useState<string | null>(null);
  const base = `/api/photos/${photoId}/versions/${versionId}`;
  const load = useCallback(async () => {
    const answer = await api.disclosure(photoId, versionId);
    if (answer?.body.disclosure) setView(answer.body.disclosure);
  }, [photoId, versionId]);
  useEffect(() => {
    void load();
  }, [load]);
  async function publish() {
    const answer = await api.publishOriginal(photoId, versionId);
    setNote(answer?.ok ? "Original page published." : (answer?.body.error ?? "The page could not be published."));
    setWarning(null);
    await load();
  }
  async function confirmChecked() {
    const answer = await api.confirmStructure(photoId, versionId);
    setNote(answer?.ok ? STRUCTURE_CONFIRMED : (answer?.body.error ?? "The confirmation was not saved. Try again."));
    await load();
  }
  async function withdraw(confirm: boolean) {
    const answer = await api.withdrawOriginal(photoId, versionId, confirm);
    const said = answer?.body.error;
    if (answer?.status === 409 && !confirm) return setWarning(said ?? "This listing still advertises.");
    setWarning(null);
    setNote(answer?.ok ? "Link revoked: it now answers “withdrawn”." : (said ?? "The link could not be revoked."));
    await load();
  }
  if (!view) return null;
  const page = view.page;
  const btn = "btn-ghost min-h-8 px-2 py-0.5";
  return (
    <div className="space-y-1 text-sm" data-testid="original-link">
      <p className="text-xs text-muted" data-testid="mls-profile">
        For MLS: {view.profile.name}
      </p>
      {!view.exportable ? (
        <>
          <p className="text-xs text-amber-800" data-testid="mls-refused">
            {view.reason}
          </p>
          {view.needsConfirmation ? (
            <button type="button" className={btn} onClick={() => void confirmChecked()} data-testid="confirm-structure">
              {CONFIRM_CHECKED}
            </button>
          ) : null}
          {page.state === "live" && page.url ? (
            // A page made before the version stopped going out (a returned result, ADR 0263) can still be withdrawn.
            <div className="flex flex-wrap items-center gap-1">
              <a href={page.url} target="_blank" rel="noreferrer" className="break-all underline">
                {page.url}
              </a>
              <button type="button" className={btn} onClick={() => void withdraw(false)}>
                Revoke link
              </button>
            </div>
          ) : null}
        </>
      ) : (
        <>
          {view.caption ? (
            <p className="text-xs" data-testid="mls-caption">
              Caption: {view.caption}
            </p>
          ) : null}
          <div className="flex flex-wrap items-center gap-1">
            {page.state !== "live" && view.downloadNeedsPage ? (
              page.state === "none" ? (
                // A plain form: the answer is the file, so the dialog stays as it is.
                <form
                  method="post"
                  action={`${base}/labelled`}
                  onSubmit={() => {
                    // The answer is a download, not a page: read the page's state again once it has been made.
                    for (const ms of [400, 1500, 4000]) setTimeout(() => void load(), ms);
                  }}
                >
                  <input type="hidden" name="publish" value="first" />
                  <button type="submit" className={btn} data-testid="download-labelled">
                    Download for MLS (publishes its original page)
                  </button>
                </form>
              ) : null
            ) : (
              <a href={`${base}/labelled`} download className={btn} data-testid="download-labelled">
                Download for MLS
              </a>
            )}
            {page.state === "live" && page.url ? (
              <>
                <a
                  href={page.url}
                  target="_blank"
                  rel="noreferrer"
                  className="break-all underline"
                  data-testid="original-link-url"
                >
                  {page.url}
                </a>
                <button type="button" className={btn} onClick={() => void withdraw(false)}>
                  Revoke link
                </button>
              </>
            ) : (
              <button type="button" className={btn} onClick={() => void publish()}>
                {page.state === "withdrawn" ? "Publish the original page again" : "Original page link"}
              </button>
            )}
          </div>
        </>
      )}
      {view.message && page.state === "withdrawn" ? (
        <p className="text-xs text-muted" data-testid="mls-message">
          {view.message}
        </p>
      ) : null}
      {warning ? (
        <div
          className="rounded border border-amber-300 bg-amber-50 p-2 text-xs"
          role="alert"
          data-testid="withdraw-warning"
        >
          <p>{warning}</p>
          <button type="button" className="btn-danger mt-1 min-h-8 px-2 py-0.5" onClick={() => void withdraw(true)}>
            Withdraw it anyway
          </button>
        </div>
      ) : null}
      {note ? (
        <span role="status" className="text-muted">
          {note}
        </span>
      ) : null}
    </div>
  );
}
