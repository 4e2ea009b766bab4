import { photoFolder } from "@db/access";
import type { Database } from "@db/client";
import { folders, type PhotoVersion, photos, photoVersions } from "@db/schema";
import type { Images } from "@workers/lib/images";
import { photoAccess } from "@workers/services/teams/access";
import { type Exporter, keepBytes, keepOriginal, teamListingOf, writeRecord } from "@workers/services/teams/record";
import { and, eq } from "drizzle-orm";
import { type DisclosedKind, KIND_NAMES, PLACEMENT_NAMES, sourceLine } from "~/shared/mls-profiles";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { versionBytes } from "~/shared/version-bytes";
import { captionFor, type Disclosure, disclosureFor, exportable, labelFor, labelLines } from "./disclosure";
import { labelledBytes } from "./labels";
import { type LinkState, linkState, liveUrl, NOT_PUBLISHED, publishOriginal, withdrawnMessage } from "./links";

// One version's download for MLS (docs/decisions/0170-mls-profiles.md), the same for the owner's pages and the
// public API: labelled or clean as the listing's profile says, refused when the profile does not let the version
// be published, and refused (saying why) when the label needs an original page that is not live. A GET never
// publishes; the POST that says so publishes a page only when there never was one.

export const TRASHED_NOT_EXPORTED =
  "This photo is in the trash, and its public original page is closed. Restore it to download it for MLS.";

export interface VersionForMls {
  version: PhotoVersion;
  photoName: string;
  /** In the trash: its page answers 410, and it is not downloaded for MLS until restored. */
  trashed: boolean;
  disclosure: Disclosure;
  state: LinkState;
}

/**
 * The owner's version, with its photo's name and the disclosure its listing follows; a stranger's is not found.
 * `userId` is the owner scope (a team listing's photo: its uploader, from photoAccess; see versionForMember).
 */
export async function versionForMls(
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
): Promise<VersionForMls | null> {
  const row = await db
    .select({ version: photoVersions, photoName: photos.name, trashedAt: photos.trashedAt, folder: folders })
    .from(photoVersions)
    .innerJoin(photos, eq(photos.id, photoVersions.photoId))
    .leftJoin(folders, photoFolder(userId))
    .where(and(eq(photoVersions.id, versionId), eq(photoVersions.photoId, photoId), eq(photoVersions.userId, userId)))
    .get();
  if (!row) return null;
  const [disclosure, state] = await Promise.all([
    disclosureFor(db, userId, row.folder),
    linkState(db, userId, versionId, row.folder),
  ]);
  return { version: row.version, photoName: row.photoName, trashed: row.trashedAt !== null, disclosure, state };
}

/**
 * The version as the signed-in user may reach it: their own photo's, or a team listing's photo's whoever uploaded
 * it, read under its owner's scope (docs/decisions/0280, 0298); null for anything else (404).
 */
export async function versionForMember(
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
): Promise<(VersionForMls & { ownerId: string }) | null> {
  const scope = await photoAccess(db, userId, photoId);
  if (!scope) return null;
  const found = await versionForMls(db, scope.ownerId, photoId, versionId);
  return found ? { ...found, ownerId: scope.ownerId } : null;
}

/** What the owner's page shows of a version's disclosure: profile, caption, label, page, or why it cannot go out. */
export function disclosureView(found: VersionForMls, origin: string) {
  const { disclosure, state, version } = found;
  const { profile } = disclosure;
  const allowed = exportable(disclosure, version);
  const page = liveUrl(origin, state);
  const kind = allowed.ok ? allowed.kind : null;
  const lines = kind ? labelLines(disclosure, kind, page ?? `${origin}/o/…`) : null;
  return {
    profile: { id: profile.id, name: profile.name, rule: sourceLine(profile), from: disclosure.from },
    exportable: allowed.ok,
    reason: allowed.ok ? null : allowed.reason,
    /** Flagged and not yet confirmed: "I checked the walls and windows" lets it out. */
    needsConfirmation: !allowed.ok && allowed.unconfirmed === true,
    kind: kind ? KIND_NAMES[kind] : null,
    labelOnPhoto: profile.label !== null,
    /** The label gives the original's address: Download for MLS needs a live page. */
    downloadNeedsPage: kind ? labelFor(disclosure, kind, null) === "needs-page" : false,
    label: lines?.length ? lines : null,
    caption: kind ? captionFor(disclosure, kind, page ?? `${origin}/o/…`) : null,
    remarks: profile.remarks,
    originals: PLACEMENT_NAMES[profile.original],
    notCheckedByUs: profile.unchecked,
    page: { state: state.state, url: page, at: state.state === "withdrawn" ? state.at : null },
    message: state.state === "withdrawn" ? withdrawnMessage(state) : null,
  };
}

export interface MlsFile {
  body: ReadableStream | Uint8Array<ArrayBuffer>;
  contentType: string;
  fileName: string;
  labelled: boolean;
}

/**
 * The version's bytes as its listing's profile wants them for the MLS. `publish` "first": the owner's POST that
 * publishes the original page when there never was one (never one they withdrew).
 */
export async function mlsDownload(
  deps: { db: Database; bucket: R2Bucket; images: Images; origin: string; clock: () => number },
  userId: string,
  photoId: string,
  versionId: string,
  publish: "first" | null,
  /** Who asks, and through which door: a team listing's download is written into the broker's record first. */
  by: { who: Exporter; via: "mls_download" | "api_download" } = { who: { userId, keyId: null }, via: "mls_download" },
): Promise<Result<{ file: MlsFile }>> {
  const { db, bucket, origin } = deps;
  // A teammate's download of a team listing's photo reads it under its uploader's scope; the record names who asked.
  const reached = await versionForMember(db, userId, photoId, versionId);
  if (!reached) return NOT_FOUND;
  const { ownerId, ...first } = reached;
  let found: VersionForMls = first;
  if (found.trashed) return fail("conflict", TRASHED_NOT_EXPORTED);
  const allowed = exportable(found.disclosure, found.version);
  if (!allowed.ok)
    return fail(allowed.code, allowed.code === "conflict" ? allowed.reason : `Not exported. ${allowed.reason}`);
  if (publish === "first" && found.state.state !== "live") {
    const made = await publishOriginal(db, ownerId, photoId, versionId, "first", deps.clock(), by.who.keyId, userId);
    if (!made.ok) return made;
    found = { ...found, state: { state: "live", token: made.token, createdAt: deps.clock() } };
  }
  const { version, disclosure, state } = found;
  const kind: DisclosedKind = allowed.kind;
  const spec = labelFor(disclosure, kind, liveUrl(origin, state));
  if (spec === "needs-page")
    return fail("conflict", state.state === "withdrawn" ? withdrawnMessage(state) : NOT_PUBLISHED);
  const ext = version.contentType === "image/png" ? "png" : "jpg";
  const name = found.photoName.replace(/\.(jpe?g|png)$/i, "") || "photo";
  const fileName = `${name} (${version.kind}, ${spec ? "labelled" : "for MLS"}).${ext}`;
  // A team listing's download is recorded (with a copy of its bytes) before a byte is served (ADR 0285).
  const listing = await teamListingOf(db, photoId);
  const record = async (bytes: Uint8Array | ArrayBuffer, contentType: string) => {
    if (!listing) return;
    const [kept, originalKey] = await Promise.all([
      keepBytes(bucket, listing.teamId, bytes, contentType),
      keepOriginal(bucket, listing),
    ]);
    const fact = {
      listing,
      via: by.via,
      versionId: version.id,
      versionKind: version.kind,
      profile: disclosure.profile.id,
      labelText: spec ? spec.lines.join(" / ") : null,
      caption: captionFor(disclosure, kind, liveUrl(origin, state)),
      sha256: kept.sha256,
      recordKey: kept.key,
      originalKey,
    };
    await writeRecord(db, by.who, [fact], deps.clock());
  };
  if (!spec) {
    // The profile's own refusals came first (exportable); the bytes leave as the byte rule says (ADR 0200).
    const full = versionBytes(version, "full");
    if (!full.ok) return full;
    const obj = await bucket.get(full.key);
    if (!obj) return NOT_FOUND;
    if (!listing) return ok({ file: { body: obj.body, contentType: version.contentType, fileName, labelled: false } });
    const bytes = new Uint8Array(await obj.arrayBuffer());
    await record(bytes, version.contentType);
    return ok({ file: { body: bytes, contentType: version.contentType, fileName, labelled: false } });
  }
  const rendered = await labelledBytes(bucket, deps.images, version, spec);
  if (!rendered.ok) return rendered;
  await record(rendered.bytes, rendered.contentType);
  return ok({
    file: {
      body: rendered.bytes as Uint8Array<ArrayBuffer>,
      contentType: rendered.contentType,
      fileName,
      labelled: true,
    },
  });
}
