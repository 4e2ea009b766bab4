import { useState } from "react";

// A folder's listing details and its pack download (docs/decisions/0111-listing-packs-and-streamed-zips.md).

export function ListingPackPanel({
  folderId,
  address,
  mlsNumber,
}: {
  folderId: string;
  address: string | null;
  mlsNumber: string | null;
}) {
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  async function save(form: HTMLFormElement) {
    const fd = new FormData(form);
    const res = await fetch(`/api/folders/${folderId}/listing`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ address: fd.get("address") ?? "", mlsNumber: fd.get("mlsNumber") ?? "" }),
    });
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    setMessage(res.ok ? { ok: true, text: "Listing details saved." } : { ok: false, text: body.error ?? "Not saved." });
  }
  return (
    <details className="card" data-testid="listing-pack">
      <summary className="cursor-pointer font-semibold">Listing details and MLS pack</summary>
      <form
        className="mt-3 grid gap-3 sm:grid-cols-[2fr_1fr_auto] sm:items-end"
        onSubmit={(e) => {
          e.preventDefault();
          void save(e.currentTarget);
        }}
      >
        <label className="grid gap-1 text-sm">
          Listing address
          <input name="address" className="input" maxLength={200} defaultValue={address ?? ""} />
        </label>
        <label className="grid gap-1 text-sm">
          MLS number
          <input name="mlsNumber" className="input" maxLength={40} defaultValue={mlsNumber ?? ""} />
        </label>
        <button type="submit" className="btn-secondary">
          Save
        </button>
      </form>
      {message ? (
        <p className={`mt-2 ${message.ok ? "alert-success" : "alert-error"}`} role="status">
          {message.text}
        </p>
      ) : null}
      <p className="mt-3 text-sm text-muted">
        One ZIP with each photo's staged version (labelled per your settings), its original and a manifest (CSV and
        JSON) with the links to the original pages.
      </p>
      <a href={`/api/folders/${folderId}/pack`} download className="btn-primary mt-2" data-testid="download-pack">
        Download listing pack
      </a>
    </details>
  );
}
