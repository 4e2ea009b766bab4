import { CONTROL_CHARS, form, type HostileCase, HUGE_JSON, SQL_META, TRAVERSAL } from "./harness.ts";

// Hostile cases of the MLS routes (issue 16), keyed by route so the suite
// generated from the route table can pick them up. Every case must be refused
// with a 4xx and change nothing stored (test/e2e/hostile/mls.e2e.ts runs them).

export interface MlsFixtures {
  /** The attacker's and the owner's Cookie headers. */
  stranger: Record<string, string>;
  owner: Record<string, string>;
  /** The owner's photo, its staged version and a folder with listing details. */
  photoId: string;
  versionId: string;
  /** A version of the owner's with no live link. */
  unlinkedVersionId: string;
  folderId: string;
  /** An original-page token the owner revoked, and the live one made after it (same version). */
  revokedToken: string;
  liveToken: string;
  /** A version of the owner's whose only page was withdrawn (a download must not publish it again). */
  withdrawnVersionId: string;
  /** A folder of the owner's that was deleted. */
  deletedFolderId: string;
  /** A listing of the owner's team (the stranger is no member), and a staged photo in it with its version. */
  teamFolderId: string;
  teamPhotoId: string;
  teamVersionId: string;
  /** A Google-only account's Cookie header, and its deletion confirmations with Google (see reauthFixtures). */
  googleOwner: Record<string, string>;
  reauth: ReauthFixtures;
}

/** Returns from Google to /auth/google/callback, made by test/e2e/hostile/mls.e2e.ts through the OAuth emulator. */
export interface ReauthFixtures {
  /** A confirmation already completed: its callback path and OAuth cookie (replaying them must fail). */
  usedPath: string;
  usedCookie: string;
  /** A confirmation the Google owner started, answered by another Google account. */
  pendingPath: string;
  pendingCookie: string;
}

/** A token of the right shape that no one was given. */
export const GUESSED_TOKEN = "abcdefghijklmnopqrstuvwxyz";

export function mlsCases(f: MlsFixtures): Record<string, HostileCase[]> {
  const r = f.reauth;
  const withOauth = (session: Record<string, string>, oauth: string) => ({ Cookie: `${session.Cookie}; ${oauth}` });
  const version = `/api/photos/${f.photoId}/versions/${f.versionId}`;
  const labelled = `${version}/labelled`;
  return {
    "GET /api/photos/:id/versions/:versionId/labelled": [
      { name: "stranger's version", method: "GET", path: labelled, headers: f.stranger, status: 404 },
      { name: "no session", method: "GET", path: labelled, status: 401 },
      {
        name: "another photo's id with this version",
        method: "GET",
        path: `/api/photos/${GUESSED_TOKEN}/versions/${f.versionId}/labelled`,
        headers: f.owner,
        status: 404,
      },
      // The listing's profile decides the label: a download takes no options of its own (issue 34).
      ...[
        `text=${encodeURIComponent(CONTROL_CHARS)}`,
        `text=${"x".repeat(41)}`,
        "corner=middle",
        "qr=yes",
        "label=none",
        `evil=${encodeURIComponent(SQL_META)}`,
      ].map((q) => ({
        name: `an option (${q.slice(0, 12)})`,
        method: "GET",
        path: `${labelled}?${q}`,
        headers: f.owner,
        status: 400,
        message: "takes no options",
      })),
      {
        name: "a version with no page: refused, nothing published (a GET never publishes)",
        method: "GET",
        path: `/api/photos/${f.photoId}/versions/${f.unlinkedVersionId}/labelled`,
        headers: f.owner,
        status: 409,
        message: "no public original page yet",
      },
      {
        name: "a version whose page was withdrawn: refused, nothing published again",
        method: "GET",
        path: `/api/photos/${f.photoId}/versions/${f.withdrawnVersionId}/labelled`,
        headers: f.owner,
        status: 409,
        message: "You withdrew",
      },
    ],
    "POST /api/photos/:id/versions/:versionId/labelled": [
      {
        name: "another team's listing photo, publishing first",
        method: "POST",
        path: `/api/photos/${f.teamPhotoId}/versions/${f.teamVersionId}/labelled`,
        headers: f.stranger,
        body: form({ publish: "first" }),
        status: 404,
      },
      {
        name: "stranger's version",
        method: "POST",
        path: labelled,
        headers: f.stranger,
        body: form({ publish: "first" }),
        status: 404,
      },
      { name: "no session", method: "POST", path: labelled, body: form({ publish: "first" }), status: 401 },
      {
        name: "without saying it publishes",
        method: "POST",
        path: labelled,
        headers: f.owner,
        body: form({}),
        status: 400,
      },
      {
        name: "publish anything but first",
        method: "POST",
        path: labelled,
        headers: f.owner,
        body: form({ publish: "again" }),
        status: 400,
      },
      {
        name: "JSON, not a form",
        method: "POST",
        path: labelled,
        headers: f.owner,
        body: { publish: "first" },
        status: 415,
      },
      {
        name: "a withdrawn page is not published again by a download",
        method: "POST",
        path: `/api/photos/${f.photoId}/versions/${f.withdrawnVersionId}/labelled`,
        headers: f.owner,
        body: form({ publish: "first" }),
        status: 409,
        message: "You withdrew",
      },
      {
        name: "cross-site",
        method: "POST",
        path: `/api/photos/${f.photoId}/versions/${f.unlinkedVersionId}/labelled`,
        headers: { ...f.owner, Origin: "https://evil.example" },
        body: form({ publish: "first" }),
        status: 403,
      },
    ],
    "GET /api/photos/:id/versions/:versionId/disclosure": [
      {
        name: "another team's listing photo",
        method: "GET",
        path: `/api/photos/${f.teamPhotoId}/versions/${f.teamVersionId}/disclosure`,
        headers: f.stranger,
        status: 404,
      },
      {
        name: "the team photo's id with the owner's personal version",
        method: "GET",
        path: `/api/photos/${f.teamPhotoId}/versions/${f.versionId}/disclosure`,
        headers: f.owner,
        status: 404,
      },
      { name: "stranger's version", method: "GET", path: `${version}/disclosure`, headers: f.stranger, status: 404 },
      { name: "no session", method: "GET", path: `${version}/disclosure`, status: 401 },
    ],
    "POST /api/photos/:id/versions/:versionId/link": [
      { name: "stranger's version", method: "POST", path: `${version}/link`, headers: f.stranger, status: 404 },
      { name: "no session", method: "POST", path: `${version}/link`, status: 401 },
      {
        name: "cross-site",
        method: "POST",
        path: `${version}/link`,
        headers: { ...f.owner, Origin: "https://evil.example" },
        status: 403,
      },
    ],
    "DELETE /api/photos/:id/versions/:versionId/link": [
      { name: "stranger revokes", method: "DELETE", path: `${version}/link`, headers: f.stranger, status: 404 },
      {
        name: "no live link",
        method: "DELETE",
        path: `/api/photos/${f.photoId}/versions/${f.unlinkedVersionId}/link`,
        headers: f.owner,
        status: 404,
      },
      {
        name: "the listing still advertises: asks first, naming the law",
        method: "DELETE",
        path: `${version}/link`,
        headers: f.owner,
        status: 409,
        message: "Business and Professions Code 10140.8",
      },
      {
        name: "confirm that is not true",
        method: "DELETE",
        path: `${version}/link`,
        headers: f.owner,
        body: { confirm: "yes" },
        status: 400,
      },
      {
        name: "a form body",
        method: "DELETE",
        path: `${version}/link`,
        headers: { ...f.owner, "Content-Type": "application/x-www-form-urlencoded" },
        body: "confirm=true",
        status: 415,
      },
    ],
    "GET /o/:token": [
      { name: "revoked token", method: "GET", path: `/o/${f.revokedToken}`, status: 410 },
      { name: "guessed token", method: "GET", path: `/o/${GUESSED_TOKEN}`, status: 404 },
      { name: "malformed token", method: "GET", path: `/o/${encodeURIComponent(SQL_META)}`, status: 404 },
      { name: "traversal", method: "GET", path: `/o/${encodeURIComponent(TRAVERSAL)}`, status: 404 },
    ],
    "GET /api/o/:token/versions/:versionId": [
      {
        name: "revoked token",
        method: "GET",
        path: `/api/o/${f.revokedToken}/versions/${f.versionId}`,
        status: 410,
      },
      { name: "guessed token", method: "GET", path: `/api/o/${GUESSED_TOKEN}/versions/${f.versionId}`, status: 404 },
      {
        name: "a version that is not this page's",
        method: "GET",
        path: `/api/o/${f.liveToken}/versions/${GUESSED_TOKEN}`,
        status: 404,
      },
      {
        name: "an unknown size",
        method: "GET",
        path: `/api/o/${f.liveToken}/versions/${f.versionId}?size=${encodeURIComponent(TRAVERSAL)}`,
        status: 404,
      },
    ],
    "GET /api/o/:token/:which": [
      { name: "revoked token, original", method: "GET", path: `/api/o/${f.revokedToken}/original`, status: 410 },
      { name: "revoked token, staged", method: "GET", path: `/api/o/${f.revokedToken}/staged`, status: 410 },
      { name: "guessed token", method: "GET", path: `/api/o/${GUESSED_TOKEN}/original`, status: 404 },
      { name: "other variant", method: "GET", path: `/api/o/${f.revokedToken}/thumb`, status: 404 },
    ],
    "PUT /api/folders/:id/status": [
      {
        name: "stranger's folder",
        method: "PUT",
        path: `/api/folders/${f.folderId}/status`,
        headers: f.stranger,
        body: { status: "sold", closeAfterDays: 0 },
        status: 404,
      },
      {
        name: "a deleted folder",
        method: "PUT",
        path: `/api/folders/${f.deletedFolderId}/status`,
        headers: f.owner,
        body: { status: "sold", closeAfterDays: 1 },
        status: 404,
      },
      {
        name: "unknown status",
        method: "PUT",
        path: `/api/folders/${f.folderId}/status`,
        headers: f.owner,
        body: { status: "withdrawn" },
        status: 400,
      },
      ...[-1, 366, 1.5, "1e9", null].map((days) => ({
        name: `days ${JSON.stringify(days)}`,
        method: "PUT",
        path: `/api/folders/${f.folderId}/status`,
        headers: f.owner,
        body: { status: "sold", closeAfterDays: days },
        status: 400,
      })),
      {
        name: "not JSON",
        method: "PUT",
        path: `/api/folders/${f.folderId}/status`,
        headers: { ...f.owner, "Content-Type": "text/plain" },
        body: "status=sold",
        status: 415,
      },
      {
        name: "no session",
        method: "PUT",
        path: `/api/folders/${f.folderId}/status`,
        body: { status: "sold" },
        status: 401,
      },
    ],
    "POST /api/folders/:id/pack": [
      {
        name: "another team's listing, publishing",
        method: "POST",
        path: `/api/folders/${f.teamFolderId}/pack`,
        headers: f.stranger,
        body: form({ publish: "new" }),
        status: 404,
      },
      {
        name: "stranger's folder",
        method: "POST",
        path: `/api/folders/${f.folderId}/pack`,
        headers: f.stranger,
        body: form({ publish: "new" }),
        status: 404,
      },
      {
        name: "a deleted folder",
        method: "POST",
        path: `/api/folders/${f.deletedFolderId}/pack`,
        headers: f.owner,
        body: form({ publish: "new" }),
        status: 404,
      },
      {
        name: "no session",
        method: "POST",
        path: `/api/folders/${f.folderId}/pack`,
        body: form({ publish: "new" }),
        status: 401,
      },
      {
        name: "without saying it publishes",
        method: "POST",
        path: `/api/folders/${f.folderId}/pack`,
        headers: f.owner,
        body: form({ publish: "all" }),
        status: 400,
      },
    ],
    "GET /api/folders/:id/pack": [
      {
        name: "another team's listing",
        method: "GET",
        path: `/api/folders/${f.teamFolderId}/pack`,
        headers: f.stranger,
        status: 404,
      },
      {
        name: "another team's listing, its id in a different case",
        method: "GET",
        path: `/api/folders/${f.teamFolderId.toUpperCase()}/pack`,
        headers: f.stranger,
        status: 404,
      },
      {
        name: "stranger's folder",
        method: "GET",
        path: `/api/folders/${f.folderId}/pack`,
        headers: f.stranger,
        status: 404,
      },
      { name: "no session", method: "GET", path: `/api/folders/${f.folderId}/pack`, status: 401 },
      {
        name: "unknown folder",
        method: "GET",
        path: `/api/folders/${GUESSED_TOKEN}/pack`,
        headers: f.owner,
        status: 404,
      },
    ],
    "PUT /api/folders/:id/listing": [
      {
        name: "stranger's folder",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: f.stranger,
        body: { address: "1 Evil Rd", mlsNumber: "X1" },
        status: 404,
      },
      {
        name: "control characters",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: f.owner,
        body: { address: CONTROL_CHARS },
        status: 400,
      },
      {
        name: "address too long",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: f.owner,
        body: { address: "x".repeat(201) },
        status: 400,
      },
      {
        name: "unknown profile",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: f.owner,
        body: { profile: "nowhere-mls" },
        status: 400,
        message: "Pick one of the MLS profiles offered.",
      },
      {
        name: "a deleted folder",
        method: "PUT",
        path: `/api/folders/${f.deletedFolderId}/listing`,
        headers: f.owner,
        body: { address: "1 Gone St", profile: "sdmls" },
        status: 404,
      },
      {
        name: "MLS number with markup",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: f.owner,
        body: { mlsNumber: "<script>" },
        status: 400,
      },
      {
        name: "not JSON",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: { ...f.owner, "Content-Type": "text/plain" },
        body: "address=x",
        status: 415,
      },
      {
        name: "huge body",
        method: "PUT",
        path: `/api/folders/${f.folderId}/listing`,
        headers: f.owner,
        body: HUGE_JSON,
        status: 413,
      },
    ],
    "POST /api/account/delete": [
      { name: "no session", method: "POST", path: "/api/account/delete", body: { password: "x" }, status: 401 },
      {
        name: "wrong password",
        method: "POST",
        path: "/api/account/delete",
        headers: f.owner,
        body: { password: "not the password" },
        status: 400,
        message: "password is not correct",
      },
      {
        name: "password not a string",
        method: "POST",
        path: "/api/account/delete",
        headers: f.owner,
        body: { password: ["x"] },
        status: 400,
      },
      {
        name: "cross-site",
        method: "POST",
        path: "/api/account/delete",
        headers: { ...f.owner, Origin: "https://evil.example" },
        body: { password: "x" },
        status: 403,
      },
    ],
    "POST /api/account/export": [
      { name: "no session", method: "POST", path: "/api/account/export", status: 401 },
      {
        name: "cross-site",
        method: "POST",
        path: "/api/account/export",
        headers: { ...f.owner, Origin: "https://evil.example" },
        status: 403,
      },
    ],
    "GET /api/exports/:id": [
      { name: "guessed id, no signature", method: "GET", path: `/api/exports/${GUESSED_TOKEN}`, status: 410 },
      {
        name: "forged signature",
        method: "GET",
        path: `/api/exports/${GUESSED_TOKEN}?exp=99999999999999&sig=${"0".repeat(64)}`,
        status: 410,
      },
      { name: "malformed id", method: "GET", path: `/api/exports/${encodeURIComponent(TRAVERSAL)}`, status: 404 },
    ],
    "POST /dashboard": [
      {
        name: "listing with an unknown profile",
        method: "POST",
        path: "/dashboard",
        headers: f.owner,
        body: form({ intent: "listing", folderId: f.folderId, profile: "nowhere-mls" }),
        status: 400,
        message: "Pick one of the MLS profiles offered.",
      },
      {
        name: "a stranger's listing marked sold",
        method: "POST",
        path: "/dashboard",
        headers: f.stranger,
        body: form({ intent: "listing-status", folderId: f.folderId, status: "sold", closeAfterDays: "0" }),
        status: 404,
      },
      {
        name: "a deleted listing marked sold",
        method: "POST",
        path: "/dashboard",
        headers: f.owner,
        body: form({ intent: "listing-status", folderId: f.deletedFolderId, status: "sold", closeAfterDays: "0" }),
        status: 404,
      },
      {
        name: "status not offered",
        method: "POST",
        path: "/dashboard",
        headers: f.owner,
        body: form({ intent: "listing-status", folderId: f.folderId, status: "expired" }),
        status: 400,
      },
      {
        name: "trashing a photo whose page advertises an active listing: asks first, naming the law",
        method: "POST",
        path: "/dashboard",
        headers: f.owner,
        body: form({ intent: "trash", photoId: f.photoId }),
        status: 409,
        message: "10140.8",
      },
      {
        name: "confirm that is not 1",
        method: "POST",
        path: "/dashboard",
        headers: f.owner,
        body: form({ intent: "trash", photoId: f.photoId, confirm: "yes" }),
        status: 400,
      },
    ],
    "POST /settings": [
      {
        name: "an unknown MLS profile",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({
          intent: "label",
          profile: "nowhere-mls",
          text: "",
          corner: "top-left",
          size: "small",
          tone: "dark",
        }),
        status: 400,
      },
      {
        name: "label text over 60 characters",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({
          intent: "label",
          profile: "california",
          text: "x".repeat(61),
          corner: "top-left",
          size: "small",
          tone: "dark",
        }),
        status: 400,
      },
      {
        name: "label text with control characters",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({
          intent: "label",
          profile: "california",
          text: CONTROL_CHARS,
          corner: "top-left",
          size: "small",
          tone: "dark",
        }),
        status: 400,
      },
      {
        name: "label corner not offered",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({
          intent: "label",
          profile: "california",
          text: "Staged",
          corner: "centre",
          size: "small",
          tone: "dark",
        }),
        status: 400,
      },
      {
        name: "delete with the wrong password",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({ intent: "delete", password: "wrong" }),
        status: 400,
      },
      {
        name: "confirm with Google for an account without Google",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({ intent: "reauth-google" }),
        status: 403,
      },
      {
        name: "delete with a Google confirmation this session does not hold",
        method: "POST",
        path: "/settings",
        headers: f.stranger,
        body: form({ intent: "delete", confirm: "google" }),
        status: 403,
      },
    ],
    // Deletion confirmations with Google (docs/decisions/0112-account-deletion-and-export.md). The order
    // matters: the last case spends the emulator's code.
    "GET /auth/google/callback": [
      {
        name: "replayed confirmation",
        method: "GET",
        path: r.usedPath,
        headers: withOauth(f.googleOwner, r.usedCookie),
        status: 400,
        message: "expired or was already used",
      },
      {
        name: "a stranger's session with the owner's confirmation",
        method: "GET",
        path: r.pendingPath,
        headers: withOauth(f.stranger, r.pendingCookie),
        status: 400,
      },
      { name: "no session", method: "GET", path: r.pendingPath, headers: { Cookie: r.pendingCookie }, status: 401 },
      {
        name: "forged state",
        method: "GET",
        path: r.pendingPath.replace(/state=[^&]+/, "state=forged-state"),
        headers: withOauth(f.googleOwner, r.pendingCookie),
        status: 400,
      },
      {
        name: "hand-made confirmation cookie matching the state",
        method: "GET",
        path: "/auth/google/callback?code=made-up&state=made-up",
        headers: withOauth(f.googleOwner, "sw_oauth=made-up.verifier.reauth-delete."),
        status: 400,
      },
      {
        name: "another Google account answers",
        method: "GET",
        path: r.pendingPath,
        headers: withOauth(f.googleOwner, r.pendingCookie),
        status: 403,
        message: "not the one this account signs in with",
      },
    ],
  };
}
