import { type Failure, fail, type Ok, ok } from "./result";
import { REFUSED_NOT_DOWNLOADED, type StructureVerdict } from "./version-view";

// The one rule for a version's bytes (docs/decisions/0200-one-rule-for-a-versions-bytes.md). Every path that serves
// or sends a version's bytes asks here which stored object it may use: the owner's image, thumbnail and download
// routes, the shown image's download, Download for MLS, listing packs, original pages, the public API's download,
// the data export and the source sent to the provider. A result the structure check refused was not charged: until
// its owner keeps it (for a credit) it is given only as its preview (its thumbnail), never at full size.
// test/integration/version-bytes.test.ts walks every route and byte path and checks each one holds to it.

/**
 * What a path asks of a version:
 * - "full": the image itself (a download, a pack, the provider's source); a refused result is refused.
 * - "shown": the image where it may be given, else its preview (the owner's image view, the data export).
 * - "preview": its thumbnail (the grid, the versions strip).
 */
export type BytesAsked = "full" | "shown" | "preview";

/** What the rule reads of a stored version (a photo_versions row, or the photo's shown version). */
export interface StoredBytes {
  key: string;
  thumbKey: string;
  structureVerdict?: StructureVerdict | null;
}

/** The stored object to serve, and whether it is the preview standing in for a refused result's image. */
export type VersionBytes = Ok<{ key: string; preview: boolean; standIn: boolean }> | Failure;

/** Whether a version's full image is its owner's to take away: anything but a refused result not kept. */
export function fullBytesAllowed(v: Pick<StoredBytes, "structureVerdict">): boolean {
  return v.structureVerdict !== "refused";
}

/** The one decision: which of the version's stored objects a path may serve, or why none (a 409). */
export function versionBytes(v: StoredBytes, asked: BytesAsked): VersionBytes {
  if (fullBytesAllowed(v)) {
    return asked === "preview"
      ? ok({ key: v.thumbKey, preview: true, standIn: false })
      : ok({ key: v.key, preview: false, standIn: false });
  }
  // A refused result: its preview at most, and only a preview that is not the image itself (its thumbnail could not
  // be made, so the row points at the full image: no preview rather than the image).
  if (asked === "full" || v.thumbKey === v.key) return fail("conflict", REFUSED_NOT_DOWNLOADED);
  return ok({ key: v.thumbKey, preview: true, standIn: true });
}
