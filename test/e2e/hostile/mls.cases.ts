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
  /** An original-page token the owner revoked. */
  revokedToken: string;
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
      {
        name: "control characters in the text",
        method: "GET",
        path: `${labelled}?text=${encodeURIComponent(CONTROL_CHARS)}`,
        headers: f.owner,
        status: 400,
        message: "not allowed",
      },
      {
        name: "text over 40 characters",
        method: "GET",
        path: `${labelled}?text=${"x".repeat(41)}`,
        headers: f.owner,
        status: 400,
        message: "at most 40",
      },
      {
        name: "characters the font lacks",
        method: "GET",
        path: `${labelled}?text=${encodeURIComponent("Staged \u{1F3E0}")}`,
        headers: f.owner,
        status: 400,
      },
      { name: "unknown corner", method: "GET", path: `${labelled}?corner=middle`, headers: f.owner, status: 400 },
      { name: "qr not 0/1", method: "GET", path: `${labelled}?qr=yes`, headers: f.owner, status: 400 },
      { name: "unknown option", method: "GET", path: `${labelled}?evil=${SQL_META}`, headers: f.owner, status: 400 },
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
    ],
    "GET /o/:token": [
      { name: "revoked token", method: "GET", path: `/o/${f.revokedToken}`, status: 410 },
      { name: "guessed token", method: "GET", path: `/o/${GUESSED_TOKEN}`, status: 404 },
      { name: "malformed token", method: "GET", path: `/o/${encodeURIComponent(SQL_META)}`, status: 404 },
      { name: "traversal", method: "GET", path: `/o/${encodeURIComponent(TRAVERSAL)}`, status: 404 },
    ],
    "GET /api/o/:token/:which": [
      { name: "revoked token, original", method: "GET", path: `/api/o/${f.revokedToken}/original`, status: 410 },
      { name: "revoked token, staged", method: "GET", path: `/api/o/${f.revokedToken}/staged`, status: 410 },
      { name: "guessed token", method: "GET", path: `/api/o/${GUESSED_TOKEN}/original`, status: 404 },
      { name: "other variant", method: "GET", path: `/api/o/${f.revokedToken}/thumb`, status: 404 },
    ],
    "GET /api/folders/:id/pack": [
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
    "POST /settings": [
      {
        name: "label text with control characters",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({ intent: "label", text: CONTROL_CHARS, corner: "top-left", size: "small", tone: "dark" }),
        status: 400,
      },
      {
        name: "label corner not offered",
        method: "POST",
        path: "/settings",
        headers: f.owner,
        body: form({ intent: "label", text: "Staged", corner: "centre", size: "small", tone: "dark" }),
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
