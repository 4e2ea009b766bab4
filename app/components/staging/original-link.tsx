import { useState } from "react";

// A staged version's public original page (/o/<token>): made on demand, shown
// with a copy button, revoked with one click (docs/decisions/0110-mls-disclosure-and-original-pages.md).

export function OriginalLinkControls({ photoId, versionId }: { photoId: string; versionId: string }) {
  const [url, setUrl] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const path = `/api/photos/${photoId}/versions/${versionId}/link`;
  async function make() {
    const res = await fetch(path, { method: "POST" });
    const body = (await res.json().catch(() => ({}))) as { url?: string; error?: string };
    if (res.ok && body.url) {
      setUrl(body.url);
      setNote(null);
    } else setNote(body.error ?? "The link could not be made.");
  }
  async function revoke() {
    const res = await fetch(path, { method: "DELETE" });
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    if (res.ok) {
      setUrl(null);
      setNote("Link revoked: it now answers “withdrawn”.");
    } else setNote(body.error ?? "The link could not be revoked.");
  }
  return (
    <div className="flex flex-wrap items-center gap-1 text-sm" data-testid="original-link">
      {url ? (
        <>
          <a
            href={url}
            target="_blank"
            rel="noreferrer"
            className="break-all underline"
            data-testid="original-link-url"
          >
            {url}
          </a>
          <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => void revoke()}>
            Revoke link
          </button>
        </>
      ) : (
        <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => void make()}>
          Original page link
        </button>
      )}
      {note ? (
        <span role="status" className="text-muted">
          {note}
        </span>
      ) : null}
    </div>
  );
}
