import { useEffect, useState } from "react";
import type { VersionView } from "~/lib/use-job";
import { DESIGN_STYLES, ROOM_TYPES } from "~/shared/catalog";
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
export function useVersions(photoId: string, refresh: number): VersionView[] | null {
  const [versions, setVersions] = useState<VersionView[] | null>(null);
  useEffect(() => {
    let live = true;
    void refresh;
    fetch(`/api/photos/${photoId}/versions`, { cache: "no-store" })
      .then((r) => (r.ok ? (r.json() as Promise<{ versions: VersionView[] }>) : { versions: [] }))
      .then((b: { versions: VersionView[] }) => {
        if (live) setVersions(b.versions);
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [photoId, refresh]);
  return versions;
}

/** The versions section: newest first, each with Compare, Download and Download for MLS. */
export function VersionsList({
  versions,
  onCompare,
}: {
  versions: VersionView[] | null;
  onCompare: (v: VersionView) => void;
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
            <li key={v.id} className="space-y-1 rounded-lg border border-line p-2 text-xs">
              <img
                src={v.thumbUrl}
                alt={`Version ${versions.length - i}`}
                className="aspect-[4/3] w-full rounded object-cover"
              />
              <p>
                {versionLabel(v)} · {new Date(v.createdAt).toLocaleString()}
              </p>
              <div className="flex gap-1">
                <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => onCompare(v)}>
                  Compare
                </button>
                <a href={v.downloadUrl} download className="btn-ghost min-h-8 px-2 py-0.5">
                  Download
                </a>
                {/* With the disclosure label and QR of the original page (docs/decisions/0110-mls-disclosure-and-original-pages.md). */}
                <a
                  href={`/api/photos/${v.photoId}/versions/${v.id}/labelled`}
                  download
                  className="btn-ghost min-h-8 px-2 py-0.5"
                  data-testid="download-labelled"
                >
                  Download for MLS
                </a>
              </div>
              <OriginalLinkControls photoId={v.photoId} versionId={v.id} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
