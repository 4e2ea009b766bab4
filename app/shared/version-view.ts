// A version of a photo as the page's API answers it (GET /api/jobs/:id, GET /api/photos/:id/versions) and the
// page reads it: one shape, made by toVersionView on the server and typed by it in the browser.

export type VersionKind = "stage" | "sky" | "removal";

/**
 * What the structure check said of a version (docs/decisions/0162-results-true-to-the-room.md): passed; refused (it
 * changed walls, windows or doors, was not charged, and is shown small until kept); kept (refused, then kept for a
 * credit); unchecked (the check could not run). Null for versions made before the check.
 */
export type StructureVerdict = "passed" | "refused" | "kept" | "unchecked";

/** Why a refused result is not downloaded: it was not charged, and keeping it costs a credit. */
export const REFUSED_NOT_DOWNLOADED =
  "This result changed the room's walls, windows or doors, so it was not charged. Keep it (1 credit) to download it.";

/** Why a kept result is not offered for a listing: MLS rules forbid changing a room's permanent features. */
export const KEPT_NOT_FOR_MLS =
  "This result changed the room's walls, windows or doors, which MLS rules forbid in listing photos, so it is not offered for a listing.";

/** Why a refused result is not a starting point for another job: it was not charged, and keeping it costs a credit. */
export const REFUSED_NOT_A_SOURCE =
  "This result changed the room's walls, windows or doors and was not charged. Keep it (1 credit) to start from it.";

/** Whether a version may be what another job starts from (a refused result may not, until it is kept). */
export function usableAsSource(v: { structure?: { verdict: StructureVerdict } | null }): boolean {
  return v.structure?.verdict !== "refused";
}

/** Why a version cannot go into a listing (labelled download, original page, listing pack); null when it can. */
export function mlsRefusal(verdict: StructureVerdict | null | undefined): string | null {
  if (verdict === "refused") return REFUSED_NOT_DOWNLOADED;
  if (verdict === "kept") return KEPT_NOT_FOR_MLS;
  return null;
}

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
  structureVerdict?: StructureVerdict | null;
  structureScore?: number | null;
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
  /** The structure check's verdict and score (it fails above 1); null before the check existed. */
  structure: { verdict: StructureVerdict; score: number | null } | null;
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
    structure: v.structureVerdict ? { verdict: v.structureVerdict, score: v.structureScore ?? null } : null,
    imageUrl: `${base}/image`,
    thumbUrl: `${base}/thumb`,
    downloadUrl: `${base}/download`,
  };
}
