// A version of a photo as the page's API answers it (GET /api/jobs/:id, GET /api/photos/:id/versions) and the
// page reads it: one shape, made by toVersionView on the server and typed by it in the browser.

export type VersionKind = "stage" | "sky" | "removal";

/** What the server knows of a stored version (a photo_versions row). */
export interface StoredVersion {
  id: string;
  photoId: string;
  jobId: string;
  key: string;
  kind: VersionKind;
  params: { roomType?: string; designStyle?: string; skyType?: string; source?: string };
  width: number;
  height: number;
  bytes: number;
  createdAt: number;
}

/** A version of a photo as the page sees it. */
export interface VersionView {
  id: string;
  photoId: string;
  /** The job that made it (a re-roll repeats that job's choices). */
  jobId: string;
  kind: VersionKind;
  params: { roomType?: string; designStyle?: string; skyType?: string };
  /** What it was made from: "original" or another version's id. */
  source: string;
  /** Whether the photo shows this version (in the grid, the listing pack and the original page). */
  shown?: boolean;
  /** Its size in pixels (a result below listing size says so) and bytes. */
  width: number;
  height: number;
  bytes: number;
  createdAt: number;
  imageUrl: string;
  thumbUrl: string;
  downloadUrl: string;
}

/** The page's view of a stored version; `shownKey` is the key the photo shows (omit when not known). */
export function toVersionView(v: StoredVersion, shownKey?: string | null): VersionView {
  const base = `/api/photos/${v.photoId}/versions/${v.id}`;
  return {
    id: v.id,
    photoId: v.photoId,
    jobId: v.jobId,
    kind: v.kind,
    params: { roomType: v.params.roomType, designStyle: v.params.designStyle, skyType: v.params.skyType },
    source: v.params.source ?? "original",
    shown: shownKey === undefined ? undefined : v.key === shownKey,
    width: v.width,
    height: v.height,
    bytes: v.bytes,
    createdAt: v.createdAt,
    imageUrl: `${base}/image`,
    thumbUrl: `${base}/thumb`,
    downloadUrl: `${base}/download`,
  };
}
