import type { Database } from "@db/client";
import type { Folder } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import type { Images } from "@workers/lib/images";
import { putRetrying } from "@workers/lib/stored-retry";
import { type ZipEntry, zipStream } from "@workers/lib/zip-stream";
import { type Exporter, type ExportFact, recordRows, sha256Of } from "@workers/services/teams/record";
import { KIND_NAMES, PLACEMENT_NAMES, sourceLine } from "~/shared/mls-profiles";
import { fail, ok, type Result } from "~/shared/result";
import { cutText } from "~/shared/text";
import { versionBytes } from "~/shared/version-bytes";
import { CHECK_WALLS, CONFIRM_CHECKED } from "~/shared/version-view";
import { captionFor, type Disclosure, labelFor } from "./disclosure";
import { labelledBytes } from "./labels";
import { liveUrl, NOT_PUBLISHED, publishNew, withdrawnMessage } from "./links";
import { readListing } from "./listing-photos";

// A folder's listing pack (docs/decisions/0111-listing-packs-and-streamed-zips.md, 0170-mls-profiles.md): one ZIP,
// streamed, laid out as the listing's MLS profile says. photos/ holds what to upload, in upload order: each altered
// photo labelled or clean, its original immediately before or after it when the profile places it there, and the
// photos that were not altered. originals/ holds the originals the profile reaches by link only (for the agent's
// records). captions.csv and captions.json give each photo's caption, kind and original link, and the remarks line;
// manifest.json and manifest.csv say what was done, the label's text, the profile and its rule, and why anything
// was left out. A GET never publishes: only the POST that says so publishes the pages that never existed.

const EXT: Record<string, string> = { "image/jpeg": "jpg", "image/png": "png" };

/** Why a pack is refused while results it would carry are flagged and unconfirmed (docs/decisions/0215). */
export function unconfirmedInPack(names: string[]): string {
  const shown = names.length > 5 ? [...names.slice(0, 5), `${names.length - 5} more`] : names;
  return `This listing's pack would carry ${names.length === 1 ? "a result" : "results"} marked “${CHECK_WALLS}” that nobody has confirmed: ${shown.join(", ")}. Open ${names.length === 1 ? "the photo" : "each photo"}, compare the result with the original and confirm “${CONFIRM_CHECKED}” (or show another version), then download the pack.`;
}
export const PACK_MAX_PHOTOS = 200;

/** A file name safe in any unzip tool: no path, no control or reserved characters. */
export function safeFileName(name: string): string {
  const base = name
    .replace(/\.(jpe?g|png)$/i, "")
    .replace(/[\p{Cc}\\/:*?"<>|]/gu, "_")
    .replace(/\s+/g, " ")
    .trim();
  return cutText(base, 80).replace(/^\.+/, "") || "photo";
}

function csvCell(v: string | number | boolean | null | undefined): string {
  const s = v === null || v === undefined ? "" : String(v);
  // A leading = + - @ would run as a formula in a spreadsheet.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv<T extends object>(cols: (keyof T & string)[], rows: T[]): string {
  const lines = rows.map((r) => cols.map((c) => csvCell(r[c] as string | null)).join(","));
  return `${[cols.join(","), ...lines].join("\r\n")}\r\n`;
}

/** One photo's line of the manifest: what was done to it and where its files are. */
export interface PackRow {
  photo: string;
  /** The file to upload for this photo (the altered one, or the photo itself when nothing was altered). */
  file: string;
  kind: string;
  done: string | null;
  caption: string | null;
  originalFile: string;
  originalPage: string | null;
  /** The label burned in, or null for a clean photo. */
  labelText: string | null;
  qr: string | null;
  roomType: string | null;
  style: string | null;
  sky: string | null;
  alteredAt: string | null;
  /** Why the altered version is not in the pack (the original is uploaded as it is). */
  leftOut: string | null;
}

export function manifestCsv(rows: PackRow[]): string {
  return toCsv<PackRow>(
    [
      "photo",
      "file",
      "kind",
      "done",
      "caption",
      "originalFile",
      "originalPage",
      "labelText",
      "qr",
      "roomType",
      "style",
      "sky",
      "alteredAt",
      "leftOut",
    ],
    rows,
  );
}

export interface CaptionRow {
  file: string;
  caption: string;
  kind: string;
  original_link: string;
}

export interface PackDeps {
  db: Database;
  bucket: R2Bucket;
  /** Draws each label onto its photo (workers/lib/images.ts): the pack never decodes a photo. */
  images: Images;
  origin: string;
  clock: () => number;
}

/** An entry's bytes, kept under the record's key as they go into the zip (a team listing's pack, ADR 0285). */
function kept(bucket: R2Bucket, key: string, contentType: string, open: ZipEntry["open"]): ZipEntry["open"] {
  return async () => {
    const body = await open();
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(await new Response(body).arrayBuffer());
    if (!(await bucket.head(key)))
      await putRetrying(bucket, key, bytes, {
        httpMetadata: { contentType },
        customMetadata: { sha256: await sha256Of(bytes) },
      });
    return bytes;
  };
}

function streamOf(bucket: R2Bucket, key: string, what: string) {
  return async () => {
    const obj = await bucket.get(key);
    if (!obj) throw new Error(`${what} missing`);
    return obj.body;
  };
}

/**
 * The pack of one of the user's folders (the caller checked it is theirs). `publish`: the agent's POST that
 * publishes the original pages of altered photos that never had one; without it nothing is published, and a
 * photo whose page the profile needs and does not exist is left out with the reason.
 */
export async function listingPack(
  deps: PackDeps,
  userId: string,
  folder: Folder,
  disclosure: Disclosure,
  publish: boolean,
  /** Who asks (for a team listing's record): the user, or a team key. */
  who: Exporter = { userId, keyId: null },
): Promise<Result<{ fileName: string; stream: ReadableStream<Uint8Array>; published: number }>> {
  const { db, bucket, origin } = deps;
  const { picks, states } = await readListing(db, userId, folder, disclosure);
  if (picks.length === 0) return fail("invalid", "This folder has no photos to pack.");
  if (picks.length > PACK_MAX_PHOTOS)
    return fail("invalid", `A pack holds at most ${PACK_MAX_PHOTOS} photos: split the folder.`);
  // A flagged result nobody confirmed is not left out quietly (the agent chose it): the pack waits for the check.
  const unconfirmed = picks.filter((p) => p.allowed && !p.allowed.ok && p.allowed.unconfirmed);
  if (unconfirmed.length > 0) return fail("conflict", unconfirmedInPack(unconfirmed.map((p) => p.photo.name)));
  const now = deps.clock();
  const { profile } = disclosure;
  const published = publish
    ? await publishNew(
        db,
        folder,
        picks.flatMap((p) => (p.version && p.allowed?.ok ? [p.version] : [])),
        states,
        now,
        folder.teamId ? { who, disclosure } : undefined,
      )
    : 0;
  // A team listing's pack: one row per photo in it, written before the stream starts; each file's bytes are kept
  // under the pack's record prefix as they go in.
  const teamId = folder.teamId;
  const packId = teamId ? randomToken() : null;
  const facts: ExportFact[] = [];

  // Each file is named once its place in the upload order is known; rows and captions point at the items.
  type Item = { label: string; name: string; entry: Omit<ZipEntry, "name">; caption: Omit<CaptionRow, "file"> };
  const sequence: Item[] = [];
  const asides: Item[] = [];
  type Pick = (typeof picks)[number];
  const made: { row: PackRow; file: Item; original: Item; pick: Pick; altered: boolean }[] = [];
  for (const [n, { photo, version, allowed }] of picks.entries()) {
    const base = safeFileName(photo.name);
    const ext = EXT[photo.contentType] ?? "jpg";
    const originalKey = teamId ? `teams/${teamId}/record/originals/${photo.id}` : null;
    const openOriginal = streamOf(bucket, photo.originalKey, "original");
    const original = {
      modifiedAt: photo.createdAt,
      open: originalKey ? kept(bucket, originalKey, photo.contentType, openOriginal) : openOriginal,
    };
    const row: PackRow = {
      photo: photo.name,
      file: "",
      kind: version ? version.kind : "unaltered",
      done: version ? (KIND_NAMES[version.kind] ?? version.kind) : null,
      caption: null,
      originalFile: "",
      originalPage: null,
      labelText: null,
      qr: null,
      roomType: version?.params.roomType ?? null,
      style: version?.params.designStyle ?? null,
      sky: version?.params.skyType ?? null,
      alteredAt: version ? new Date(version.createdAt).toISOString() : null,
      leftOut: null,
    };
    let staged: Item | null = null;
    // Labelled or clean, a version's bytes go in only as the byte rule lets them leave (ADR 0200); the profile's
    // refusals (exportable) are stricter still.
    const full = version ? versionBytes(version, "full") : null;
    if (version && allowed && !allowed.ok) row.leftOut = allowed.reason;
    else if (full && !full.ok) row.leftOut = full.error;
    else if (version && full?.ok && allowed?.ok) {
      const state = states.get(version.id) ?? { state: "none" };
      const page = liveUrl(origin, state);
      const spec = labelFor(disclosure, allowed.kind, page);
      const caption = captionFor(disclosure, allowed.kind, page);
      if (spec === "needs-page" || caption === null)
        row.leftOut = state.state === "withdrawn" ? withdrawnMessage(state) : NOT_PUBLISHED;
      else {
        const made = spec
          ? async () => {
              const rendered = await labelledBytes(bucket, deps.images, version, spec);
              if (!rendered.ok) throw new Error(rendered.error);
              return rendered.bytes;
            }
          : streamOf(bucket, full.key, "version");
        const recordKey = teamId
          ? `teams/${teamId}/record/packs/${packId}/${photo.id}.${EXT[version.contentType] ?? "jpg"}`
          : null;
        const open = recordKey ? kept(bucket, recordKey, version.contentType, made) : made;
        const label = `${base} - ${KIND_NAMES[allowed.kind].toLowerCase()}.${EXT[version.contentType] ?? "jpg"}`;
        staged = {
          label,
          name: "",
          entry: { modifiedAt: version.createdAt, open },
          caption: { caption, kind: version.kind, original_link: page ?? "" },
        };
        Object.assign(row, {
          caption,
          originalPage: page,
          labelText: spec ? spec.lines.join(" / ") : null,
          qr: spec?.qrUrl ?? null,
        });
      }
    }
    if (!staged) {
      // Nothing altered may go out: the photo is uploaded as it is.
      const item: Item = {
        label: `${base}.${ext}`,
        name: "",
        entry: original,
        caption: { caption: "", kind: "unaltered", original_link: "" },
      };
      sequence.push(item);
      made.push({ row, file: item, original: item, pick: picks[n]!, altered: false });
      continue;
    }
    const originalItem: Item = {
      label: `${base} - original.${ext}`,
      name: "",
      entry: original,
      caption: { caption: "Original photo, unaltered", kind: "original", original_link: "" },
    };
    if (profile.original === "link") {
      sequence.push(staged);
      originalItem.label = `${String(n + 1).padStart(2, "0")} ${originalItem.label}`;
      asides.push(originalItem);
    } else if (profile.original === "after") sequence.push(staged, originalItem);
    else sequence.push(originalItem, staged);
    made.push({ row, file: staged, original: originalItem, pick: picks[n]!, altered: true });
  }
  if (teamId && packId)
    for (const { row, pick, altered } of made) {
      const ext = EXT[pick.version?.contentType ?? ""] ?? "jpg";
      facts.push({
        listing: {
          teamId,
          folderId: folder.id,
          folderName: folder.name,
          photoId: pick.photo.id,
          photoName: pick.photo.name,
          originalKey: pick.photo.originalKey,
          contentType: pick.photo.contentType,
        },
        via: "listing_pack",
        versionId: altered ? pick.version!.id : null,
        versionKind: altered ? pick.version!.kind : null,
        profile: profile.id,
        labelText: row.labelText,
        caption: row.caption,
        recordKey: altered ? `teams/${teamId}/record/packs/${packId}/${pick.photo.id}.${ext}` : null,
        originalKey: `teams/${teamId}/record/originals/${pick.photo.id}`,
        packId,
      });
    }
  // Upload order is file order: photos/01 …, photos/02 ….
  const width = Math.max(2, String(sequence.length).length);
  for (const [i, item] of sequence.entries()) item.name = `photos/${String(i + 1).padStart(width, "0")} ${item.label}`;
  for (const item of asides) item.name = `originals/${item.label}`;
  const files: ZipEntry[] = [...sequence, ...asides].map((item) => ({ name: item.name, ...item.entry }));
  const captions: CaptionRow[] = sequence.map((item) => ({ file: item.name, ...item.caption }));
  const rows = made.map(({ row, file, original }) => ({ ...row, file: file.name, originalFile: original.name }));

  const manifest = {
    listing: {
      folder: folder.name,
      address: folder.listingAddress ?? null,
      mlsNumber: folder.mlsNumber ?? null,
      status: folder.listingStatus,
    },
    createdAt: new Date(now).toISOString(),
    profile: {
      id: profile.id,
      name: profile.name,
      chosenBy: disclosure.from,
      rule: sourceLine(profile),
      labelOnPhoto: profile.label !== null,
      originals: PLACEMENT_NAMES[profile.original],
      remarks: profile.remarks,
      notCheckedByUs: profile.unchecked,
    },
    remarks: profile.remarks,
    photos: rows,
    leftOut: rows.filter((r) => r.leftOut).map((r) => ({ photo: r.photo, kind: r.kind, reason: r.leftOut })),
  };
  // The remarks line, when the profile has one, is the CSV's last row (kind "listing remarks", no file).
  const captionsCsv = toCsv<CaptionRow>(
    ["file", "caption", "kind", "original_link"],
    profile.remarks
      ? [...captions, { file: "", caption: profile.remarks, kind: "listing remarks", original_link: "" }]
      : captions,
  );
  const enc = new TextEncoder();
  const text = (name: string, body: string): ZipEntry => ({
    name,
    modifiedAt: now,
    open: async () => enc.encode(body),
  });
  async function* entries(): AsyncGenerator<ZipEntry> {
    yield text("manifest.json", JSON.stringify(manifest, null, 2));
    yield text("manifest.csv", manifestCsv(rows));
    yield text("captions.csv", captionsCsv);
    yield text(
      "captions.json",
      JSON.stringify({ profile: profile.id, remarks: profile.remarks, photos: captions }, null, 2),
    );
    yield* files;
  }
  const recorded = await recordRows(db, who, facts, now);
  const [first, ...rest] = recorded;
  if (first) await db.batch([first, ...rest]);
  const zip = zipStream(entries());
  return ok({ fileName: `${safeFileName(folder.name)} listing pack.zip`, stream: zip.stream, published });
}
