// A version of a photo as the page's API answers it (GET /api/jobs/:id, GET /api/photos/:id/versions) and the
// page reads it: one shape, made by toVersionView on the server and typed by it in the browser.

import { CHECK_WALLS, CONFIRM_CHECKED } from "./structure-words";

export type VersionKind = "stage" | "sky" | "removal";

/**
 * What the structure check said of a version (docs/decisions/0215-flag-when-unsure.md, 0162): passed; flagged (it may
 * have changed the room: delivered and charged, marked "Check the walls and windows", and offered for a listing only
 * once its owner confirms they checked it); refused (it changed walls, windows or doors, was not charged, and is shown
 * small until kept); kept (refused, then kept for a credit); unchecked (the check could not run). Null for versions
 * made before the check.
 */
export type StructureVerdict = "passed" | "flagged" | "refused" | "kept" | "unchecked";

/** Why a flagged result is flagged: its score (the check was unsure), or the day's free refusals were spent. */
export type FlaggedBy = "score" | "daily_limit";

/**
 * How many results a day (UTC) the structure check may refuse for one user, each refunded after at most one more
 * provider call at our expense; past it, a refused result is delivered flagged and charged (ADR 0215).
 */
export const FREE_REFUSALS_PER_DAY = 5;

/**
 * "This result changed the room" (docs/decisions/0261-this-result-changed-the-room.md): a result the check passed or
 * marked gives its credit back within this many days of being made, at most RETURNS_PER_MONTH times a UTC month.
 */
export const RETURN_WINDOW_DAYS = 7;
export const RETURNS_PER_MONTH = 5;
/** What a request reads (404) when it names a version its photo does not have. */
export const VERSION_NOT_FOUND = "That version of the photo was not found.";
/** What the owner reads once the credit is back. */
export const RETURNED = "Your credit is back: thank you for telling us this result changed the room.";
/** The same for a team job: its credit was the team's pool's, and went back there (ADR 0261, 0270). */
export const RETURNED_TO_TEAM =
  "The credit is back in the team's pool: thank you for telling us this result changed the room.";
/** The same when the payment that bought the credit was refunded or disputed since: it stays spent (ADR 0339). */
export const RETURNED_HELD_BACK =
  "Thank you for telling us this result changed the room. Its credit does not come back: the payment that bought it was refunded.";
/**
 * Where a returned credit went: the user's own credits, or the team's pool that paid for the job; "held-back" when
 * the payment that bought it came back, so it went nowhere.
 */
export type ReturnedTo = "own" | "team" | "held-back";

/** What the page says once a result's credit went back, to whichever pool paid for it. */
export function returnedMessage(to: ReturnedTo): string {
  return to === "team" ? RETURNED_TO_TEAM : to === "held-back" ? RETURNED_HELD_BACK : RETURNED;
}

// What a flagged result says first, and what its owner confirms: kept in structure-words.ts (ADR 0308).
export { CHECK_WALLS, CONFIRM_CHECKED };

/** "upper left", "upper left and lower right", "a, b and c". */
function listed(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** Where the check saw the room change, as a sentence ("The structure check saw a change at the upper left …"). */
export function whereSeen(reasons: readonly string[]): string {
  return reasons.length > 0
    ? `The structure check saw a change at the ${listed(reasons)} of the photo.`
    : "The structure check could not be sure the room kept its walls, windows and doors.";
}

/** The message of a flagged result: what to check, where the check saw the change, and why it was delivered. */
export function flaggedMessage(reasons: readonly string[], flaggedBy: FlaggedBy | null): string {
  const where = ` ${whereSeen(reasons)}`;
  const why =
    flaggedBy === "daily_limit"
      ? ` It would have been refused and not charged, but ${FREE_REFUSALS_PER_DAY} of your results were already refused today, so it was delivered and charged (free refusals start again at midnight UTC).`
      : "";
  return `${CHECK_WALLS}: compare this result with the original before you use it.${where}${why}`;
}

/** What the owner reads once they confirmed a flagged result. */
export const STRUCTURE_CONFIRMED = `Confirmed: “${CONFIRM_CHECKED}”. This result can now go into a listing.`;

/** Why a refused result is not downloaded: it was not charged, and keeping it costs a credit. */
export const REFUSED_NOT_DOWNLOADED =
  "This result changed the room's walls, windows or doors, so it was not charged. Keep it (1 credit) to download it.";

/** Why a kept result is not offered for a listing: MLS rules forbid changing a room's permanent features. */
export const KEPT_NOT_FOR_MLS =
  "This result changed the room's walls, windows or doors, which MLS rules forbid in listing photos, so it is not offered for a listing.";

/** Why a flagged result is not offered for a listing until its owner says they checked it. */
export const FLAGGED_NOT_CONFIRMED = `This result is marked “${CHECK_WALLS}”: MLS rules forbid changing a room's permanent features, so it goes into a listing only once you confirm “${CONFIRM_CHECKED}” (on the photo, or POST …/versions/{versionId}/confirm-structure in the API).`;

/**
 * Why a returned result is not offered for a listing: its owner said it changed the room and got the credit back
 * (docs/decisions/0261-this-result-changed-the-room.md, 0263). It stays theirs to download as their own copy.
 */
export const RETURNED_NOT_FOR_MLS =
  "You told us this result changed the room and got its credit back, so it cannot go to an MLS. Stage the photo again.";

/** Why a refused result is not a starting point for another job: it was not charged, and keeping it costs a credit. */
export const REFUSED_NOT_A_SOURCE =
  "This result changed the room's walls, windows or doors and was not charged. Keep it (1 credit) to start from it.";

/** Whether a version may be what another job starts from (a refused result may not, until it is kept). */
export function usableAsSource(v: { structure?: { verdict: StructureVerdict } | null }): boolean {
  return v.structure?.verdict !== "refused";
}

/**
 * Why a version cannot go into a listing (labelled download, original page, listing pack); null when it can. The one
 * rule for the server's exports and the page's buttons: a returned result never (its owner said it changed the room),
 * a refused or kept one never, a flagged one once confirmed. Every field is required, so no caller can forget one.
 */
export function mlsRefusal(v: {
  verdict: StructureVerdict | null | undefined;
  confirmedAt: number | null | undefined;
  returnedAt: number | null | undefined;
}): string | null {
  // First: a returned result is refused even when it was flagged, or confirmed before its owner returned it.
  if (v.returnedAt != null) return RETURNED_NOT_FOR_MLS;
  if (v.verdict === "refused") return REFUSED_NOT_DOWNLOADED;
  if (v.verdict === "kept") return KEPT_NOT_FOR_MLS;
  if (v.verdict === "flagged" && v.confirmedAt == null) return FLAGGED_NOT_CONFIRMED;
  return null;
}

/** What a version tells of its structure check (the page's and the public API's `structure`). */
export interface StructureView {
  verdict: StructureVerdict;
  /** The check's score (higher: further from the source's architecture); null when it could not run. */
  score: number | null;
  /** Where the check saw the change ("upper left", ...); empty when it passed or cannot say. */
  reasons: string[];
  /** Flagged results only: what the owner reads (what to check, where, and why it was delivered). */
  message: string | null;
  /** Flagged results only: when the owner confirmed "I checked the walls and windows" (epoch ms), else null. */
  confirmedAt: number | null;
  /**
   * The address of the check's change map (a gray PNG: white where it saw a line lost or added, gray where a cell's
   * edges changed), readable by the owner only; null when none was stored (ADR 0260).
   */
  changesUrl: string | null;
}

/**
 * A stored version's structure view; null before the check existed. `base` is the version's address in the API that
 * answers (`/api/photos/<photo>/versions/<version>` for the page, `…/api/v1/…` for the public API): the change map is
 * at `<base>/changes`.
 */
export function structureView(
  v: {
    structureMapKey?: string | null;
    structureVerdict?: StructureVerdict | null;
    structureScore?: number | null;
    structureReasons?: string[] | null;
    structureFlagged?: FlaggedBy | null;
    structureConfirmedAt?: number | null;
  },
  base: string,
): StructureView | null {
  if (!v.structureVerdict) return null;
  const flagged = v.structureVerdict === "flagged";
  const reasons = v.structureReasons ?? [];
  return {
    verdict: v.structureVerdict,
    score: v.structureScore ?? null,
    reasons,
    message: flagged ? flaggedMessage(reasons, v.structureFlagged ?? null) : null,
    confirmedAt: flagged ? (v.structureConfirmedAt ?? null) : null,
    changesUrl: v.structureMapKey ? `${base}/changes` : null,
  };
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
  /** The photo's owner, and the member whose job made it when another (a teammate, in a team listing). */
  userId?: string;
  createdBy?: string | null;
  structureVerdict?: StructureVerdict | null;
  structureScore?: number | null;
  structureReasons?: string[] | null;
  structureFlagged?: FlaggedBy | null;
  structureConfirmedAt?: number | null;
  structureMapKey?: string | null;
  structureReturnedAt?: number | null;
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
  /** The user whose job made it (a teammate, in a team listing); null when not known. */
  createdBy: string | null;
  /** Their name, when the page was told it (a team listing's versions say who made each). */
  createdByName?: string;
  /** What the structure check said (verdict, score, where, the flagged message); null before the check existed. */
  structure: StructureView | null;
  /** When its credit went back through "This result changed the room" (epoch ms); null when it has not. */
  returnedAt: number | null;
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
    createdBy: v.createdBy ?? v.userId ?? null,
    structure: structureView(v, base),
    returnedAt: v.structureReturnedAt ?? null,
    imageUrl: `${base}/image`,
    thumbUrl: `${base}/thumb`,
    downloadUrl: `${base}/download`,
  };
}

/** Whether "This result changed the room" is offered for `v` at `now` (the server decides again, and says why not). */
export function returnable(v: Pick<VersionView, "structure" | "returnedAt" | "createdAt">, now: number): boolean {
  const verdict = v.structure?.verdict;
  return (
    (verdict === "passed" || verdict === "flagged") &&
    v.returnedAt === null &&
    now - v.createdAt <= RETURN_WINDOW_DAYS * 24 * 60 * 60 * 1000
  );
}
