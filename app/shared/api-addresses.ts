// Where the public API sends a client for a version of a photo (docs/decisions/0232-an-api-that-says-what-it-means.md),
// by what the structure check said of it. One rule for the API's answers (GET /jobs/{id}, GET …/versions, the keep
// route) and the signed callbacks, so no answer offers an address that refuses:
// - refused (it moved walls, windows or doors; not charged): no download address, the keep address (one credit);
// - kept (refused, then kept): your own copy, `?disclosure=none`; the listing download refuses it (it changed the
//   room, so it never goes into a listing);
// - anything else: the download for the listing.

export interface ApiVersionAddresses {
  /** GET it with the same API key; null while the structure check's refusal stands (keep it first). */
  downloadUrl: string | null;
  /** POST it to keep a refused result for one credit; null for any other version. */
  keepUrl: string | null;
}

/** `origin`: "" for addresses relative to the API's host (its answers), the app's origin for callbacks. */
export function apiVersionAddresses(
  origin: string,
  v: { id: string; photoId: string; structureVerdict?: string | null },
): ApiVersionAddresses {
  const base = `${origin}/api/v1/photos/${v.photoId}/versions/${v.id}`;
  if (v.structureVerdict === "refused") return { downloadUrl: null, keepUrl: `${base}/keep` };
  if (v.structureVerdict === "kept") return { downloadUrl: `${base}/download?disclosure=none`, keepUrl: null };
  return { downloadUrl: `${base}/download`, keepUrl: null };
}
