import { useEffect, useState } from "react";
import { api, type RerollQuote, type VersionsAnswer } from "~/lib/api";
import { DESIGN_STYLES, ROOM_TYPES } from "~/shared/catalog";
import { belowListingSize } from "~/shared/listing";
import type { PhotoListing } from "~/shared/listing-look";
import { type VersionView, whereSeen } from "~/shared/version-view";
import { OriginalLinkControls } from "./original-link";

export const skyLabel = (s: string) => `Sky: ${s[0]?.toUpperCase()}${s.slice(1)}`;

export function versionLabel(v: VersionView): string {
  if (v.kind === "sky") return skyLabel(v.params.skyType ?? "day");
  if (v.kind === "removal") return "Furniture removed";
  const style = DESIGN_STYLES.find((s) => s.code === v.params.designStyle)?.label ?? v.params.designStyle ?? "";
  const room = ROOM_TYPES.find((r) => r.code === v.params.roomType)?.name ?? v.params.roomType ?? "";
  return `${room} · ${style}`;
}

/** A photo's versions from GET /api/photos/:id/versions, asked again whenever `refresh` changes. */
export function useVersions(photoId: string, refresh: number): VersionsAnswer | null {
  const [answer, setAnswer] = useState<VersionsAnswer | null>(null);
  useEffect(() => {
    let live = true;
    void refresh;
    void api.versions(photoId).then((answer) => {
      // Lost (offline): what is shown stays; any other failure shows no versions.
      if (!answer || !live) return;
      const b = answer.ok ? answer.body : {};
      setAnswer({ versions: b.versions ?? [], listing: b.listing ?? null });
    });
    return () => {
      live = false;
    };
  }, [photoId, refresh]);
  return answer;
}

/** "From the original" or "From: Furniture removed · 23/11/2026, 09:12" (the version it was made from). */
export function fromLine(v: VersionView, versions: readonly VersionView[]): string {
  if (v.source === "original") return "From the original";
  const from = versions.find((o) => o.id === v.source);
  return from
    ? `From: ${versionLabel(from)} · ${new Date(from.createdAt).toLocaleString()}`
    : "From an earlier version";
}

/** Re-roll a staged result: the price is asked for and said before anything starts. */
export function RerollControl({
  version,
  onReroll,
}: {
  version: VersionView;
  onReroll: (acceptCharge: boolean) => void;
}) {
  const [quote, setQuote] = useState<RerollQuote | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function ask() {
    setError(null);
    const answer = await api.rerollQuote(version.jobId);
    if (!answer) return setError("You seem to be offline. Try again.");
    const { quote, error: said } = answer.body;
    if (!answer.ok || !quote) return setError(said ?? "Could not price the re-roll. Try again.");
    setQuote(quote);
  }
  if (!quote) {
    return (
      <>
        <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => void ask()}>
          Re-roll
        </button>
        {error ? (
          <p className="basis-full text-danger" role="alert">
            {error}
          </p>
        ) : null}
      </>
    );
  }
  return (
    <div className="basis-full space-y-1 rounded border border-line p-2" data-testid="reroll-quote">
      <p>{quote.message}</p>
      <div className="flex gap-1">
        <button
          type="button"
          className="btn-primary min-h-8 px-2 py-0.5"
          onClick={() => {
            setQuote(null);
            onReroll(quote.cost > 0);
          }}
        >
          {quote.cost === 0 ? "Re-roll free" : "Re-roll for 1 credit"}
        </button>
        <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => setQuote(null)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/**
 * A staged version of a photo in a folder: "Use this look for the listing", or that it is the listing's look
 * (docs/decisions/0190-one-look-for-a-listing.md).
 */
function LookControl({
  version,
  listing,
  onUseLook,
}: {
  version: VersionView;
  listing: PhotoListing | null | undefined;
  onUseLook?: (v: VersionView) => void;
}) {
  if (version.kind !== "stage" || !listing || !onUseLook) return null;
  if (listing.lookVersionId === version.id) {
    return (
      <p className="basis-full font-semibold text-brand-700" data-testid="version-look">
        The listing's look: staging this folder's photos follows it
      </p>
    );
  }
  return (
    <button
      type="button"
      className="btn-ghost min-h-8 px-2 py-0.5"
      onClick={() => onUseLook(version)}
      data-testid="use-look"
    >
      Use this look for the listing
    </button>
  );
}

/** The versions section: newest first, each with what it was made from, Compare, Download and Download for MLS. */
export function VersionsList({
  versions,
  listing,
  onCompare,
  onChoose,
  onReroll,
  onUseLook,
  onKeep,
}: {
  versions: VersionView[] | null;
  /** The folder the photo is in and its look; null outside any folder. */
  listing?: PhotoListing | null;
  onCompare: (v: VersionView) => void;
  /** Makes a version the one the photo shows. */
  onChoose?: (v: VersionView) => void;
  /** Re-rolls a staged version (same choices, new seed); `acceptCharge` once the price was said. */
  onReroll?: (v: VersionView, acceptCharge: boolean) => void;
  /** Makes a staged version the look of the photo's folder. */
  onUseLook?: (v: VersionView) => void;
  /** Keeps a result the structure check refused, for a credit. */
  onKeep?: (v: VersionView) => void;
}) {
  return (
    <section aria-label="Versions" className="space-y-2">
      <h3 className="text-sm font-semibold">Versions</h3>
      {versions === null ? (
        <p className="text-sm text-muted">Loading…</p>
      ) : versions.length === 0 ? (
        <p className="text-sm text-muted">No AI versions yet.</p>
      ) : (
        <ul className="grid grid-cols-2 gap-2 sm:grid-cols-3" data-testid="version-list">
          {versions.map((v, i) => (
            <li
              key={v.id}
              className={`space-y-1 rounded-lg border p-2 text-xs ${v.shown ? "border-brand-600" : "border-line"}`}
              data-testid="version"
              data-version-id={v.id}
            >
              <img
                src={v.thumbUrl}
                alt={`Version ${versions.length - i}`}
                className="aspect-[4/3] w-full rounded object-cover"
              />
              <p>
                {versionLabel(v)} · {new Date(v.createdAt).toLocaleString()}
              </p>
              <p className="text-muted" data-testid="version-from">
                {fromLine(v, versions)}
              </p>
              {v.structure?.verdict === "refused" ? (
                <div
                  className="space-y-1 rounded border border-amber-300 bg-amber-50 p-1"
                  data-testid="version-refused"
                >
                  <p className="font-semibold text-amber-900">
                    Changed the room's walls, windows or doors: not charged, not for a listing.
                  </p>
                  {v.structure.reasons.length > 0 ? (
                    <p className="text-amber-900" data-testid="version-refused-where">
                      {whereSeen(v.structure.reasons)}
                    </p>
                  ) : null}
                  {onKeep ? (
                    <button
                      type="button"
                      className="btn-secondary min-h-8 px-2 py-0.5"
                      onClick={() => onKeep(v)}
                      data-testid="keep-refused"
                    >
                      Keep it anyway · 1 credit
                    </button>
                  ) : null}
                </div>
              ) : v.structure?.verdict === "flagged" ? (
                <p
                  className="rounded border border-amber-300 bg-amber-50 p-1 text-amber-950"
                  data-testid="version-flagged"
                >
                  {v.structure.message}
                  {v.structure.confirmedAt ? " You confirmed you checked it." : ""}
                </p>
              ) : v.structure?.verdict === "kept" ? (
                <p className="text-amber-900" data-testid="version-kept">
                  Kept after the structure check found the room changed: not exported as staging
                </p>
              ) : null}
              {belowListingSize(v.width, v.height) ? (
                <p className="text-amber-800" data-testid="version-size">
                  {belowListingSize(v.width, v.height)}
                </p>
              ) : null}
              {v.structure?.verdict === "refused" ? null : v.shown ? (
                <p className="font-semibold text-brand-700" data-testid="version-shown">
                  Shown in your library
                </p>
              ) : onChoose ? (
                <button
                  type="button"
                  className="btn-secondary min-h-8 px-2 py-0.5"
                  onClick={() => onChoose(v)}
                  data-testid="choose-version"
                >
                  Use this version
                </button>
              ) : null}
              <div className="flex flex-wrap gap-1">
                <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => onCompare(v)}>
                  Compare
                </button>
                {v.structure?.verdict === "refused" ? null : (
                  <>
                    <a href={v.downloadUrl} download className="btn-ghost min-h-8 px-2 py-0.5">
                      Download
                    </a>
                    {v.kind === "stage" && onReroll ? (
                      <RerollControl version={v} onReroll={(accept) => onReroll(v, accept)} />
                    ) : null}
                    {/* Not from a refused result: it was not charged (the look is sent with every later staging). */}
                    <LookControl version={v} listing={listing} onUseLook={onUseLook} />
                  </>
                )}
              </div>
              <OriginalLinkControls photoId={v.photoId} versionId={v.id} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
