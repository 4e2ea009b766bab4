import type { Database } from "@db/client";
import { type Folder, folders, type Photo, type PhotoVersion, photos, photoVersions } from "@db/schema";
import type { LabelSpec } from "@workers/lib/label/render";
import { type ZipEntry, zipStream } from "@workers/lib/zip-stream";
import { and, asc, desc, eq, inArray, isNull } from "drizzle-orm";
import { z } from "zod";
import type { LabelDefaults } from "~/shared/label-options";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { cutText, hasControlCharacters } from "~/shared/text";
import { mlsRefusal } from "~/shared/version-view";
import { labelledBytes } from "./labels";
import { ensureLink, originalPageUrl } from "./links";

// A folder's listing pack: one ZIP, streamed, with per photo the chosen staged
// version labelled per the user's defaults, the original as uploaded, and a
// manifest (CSV and JSON) pairing them with the original pages
// (docs/decisions/0111-listing-packs-and-streamed-zips.md).

const EXT: Record<string, string> = { "image/jpeg": "jpg", "image/png": "png" };
const KIND_NAMES: Record<string, string> = {
  stage: "Virtual staging",
  sky: "Sky replacement",
  removal: "Furniture removal",
};

export interface PackRow {
  photo: string;
  original: string;
  staged: string | null;
  originalPage: string | null;
  done: string | null;
  roomType: string | null;
  style: string | null;
  sky: string | null;
  stagedAt: string | null;
  labelled: boolean;
}

/** A file name safe in any unzip tool: no path, no control or reserved characters. */
export function safeFileName(name: string): string {
  const base = name
    .replace(/\.(jpe?g|png)$/i, "")
    .replace(/[\p{Cc}\\/:*?"<>|]/gu, "_")
    .replace(/\s+/g, " ")
    .trim();
  return cutText(base, 80).replace(/^\.+/, "") || "photo";
}

/** The version a pack uses: the photo's current one (photos.processed_key), else the newest. */
function chosen(photo: Photo, all: PhotoVersion[]): PhotoVersion | null {
  // A result that changed the room (refused, or kept anyway) never goes into a listing (ADR 0162).
  const versions = all.filter((v) => !mlsRefusal(v.structureVerdict));
  return versions.find((v) => v.key === photo.processedKey) ?? versions[0] ?? null;
}

function csvCell(v: string | boolean | null): string {
  const s = v === null ? "" : String(v);
  // A leading = + - @ would run as a formula in a spreadsheet.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function manifestCsv(rows: PackRow[]): string {
  const cols: (keyof PackRow)[] = [
    "photo",
    "original",
    "staged",
    "originalPage",
    "done",
    "roomType",
    "style",
    "sky",
    "stagedAt",
    "labelled",
  ];
  return `${[cols.join(","), ...rows.map((r) => cols.map((c) => csvCell(r[c])).join(","))].join("\r\n")}\r\n`;
}

export interface PackDeps {
  db: Database;
  bucket: R2Bucket;
  origin: string;
  clock: () => number;
}

/** The pack of one of the user's folders, or not found (a stranger's folder looks the same as none). */
export async function listingPack(
  deps: PackDeps,
  userId: string,
  folder: Folder,
  defaults: LabelDefaults,
): Promise<Result<{ fileName: string; stream: ReadableStream<Uint8Array>; peakBuffered: () => number }>> {
  const { db, bucket, origin } = deps;
  const list = await db
    .select()
    .from(photos)
    .where(and(eq(photos.userId, userId), eq(photos.folderId, folder.id), isNull(photos.trashedAt)))
    .orderBy(asc(photos.createdAt), asc(photos.id))
    .all();
  if (list.length === 0) return fail("invalid", "This folder has no photos to pack.");
  if (list.length > 200) return fail("invalid", "A pack holds at most 200 photos: split the folder.");
  const versions = await db
    .select()
    .from(photoVersions)
    .where(
      and(
        eq(photoVersions.userId, userId),
        inArray(
          photoVersions.photoId,
          list.map((p) => p.id),
        ),
      ),
    )
    .orderBy(desc(photoVersions.createdAt), desc(photoVersions.id))
    .all();
  const now = deps.clock();
  const width = String(list.length).length;
  const rows: PackRow[] = [];
  const plan: { original: ZipEntry; staged: ZipEntry | null }[] = [];
  let n = 0;
  for (const photo of list) {
    n++;
    const prefix = `${String(n).padStart(Math.max(2, width), "0")} ${safeFileName(photo.name)}`;
    const version = chosen(
      photo,
      versions.filter((v) => v.photoId === photo.id),
    );
    const originalName = `originals/${prefix}.${EXT[photo.contentType] ?? "jpg"}`;
    const original: ZipEntry = {
      name: originalName,
      modifiedAt: photo.createdAt,
      open: async () => {
        const obj = await bucket.get(photo.originalKey);
        if (!obj) throw new Error("original missing");
        return obj.body;
      },
    };
    if (!version) {
      rows.push({
        photo: photo.name,
        original: originalName,
        staged: null,
        originalPage: null,
        done: null,
        roomType: null,
        style: null,
        sky: null,
        stagedAt: null,
        labelled: false,
      });
      plan.push({ original, staged: null });
      continue;
    }
    const token = await ensureLink(db, version, now);
    const page = originalPageUrl(origin, token);
    const stagedName = `staged/${prefix}.${EXT[version.contentType] ?? "jpg"}`;
    const spec: LabelSpec | null = defaults.enabled
      ? {
          text: defaults.text,
          corner: defaults.corner,
          size: defaults.size,
          tone: defaults.tone,
          qrUrl: defaults.qr ? page : null,
        }
      : null;
    rows.push({
      photo: photo.name,
      original: originalName,
      staged: stagedName,
      originalPage: page,
      done: KIND_NAMES[version.kind] ?? version.kind,
      roomType: version.params.roomType ?? null,
      style: version.params.designStyle ?? null,
      sky: version.params.skyType ?? null,
      stagedAt: new Date(version.createdAt).toISOString(),
      labelled: spec !== null,
    });
    plan.push({
      original,
      staged: {
        name: stagedName,
        modifiedAt: version.createdAt,
        open: async () => {
          if (!spec) {
            const obj = await bucket.get(version.key);
            if (!obj) throw new Error("version missing");
            return obj.body;
          }
          const rendered = await labelledBytes(bucket, version, spec);
          if (!rendered.ok) throw new Error(rendered.error);
          return rendered.bytes;
        },
      },
    });
  }
  const json = JSON.stringify(
    {
      listing: { address: folder.listingAddress ?? null, mlsNumber: folder.mlsNumber ?? null, folder: folder.name },
      createdAt: new Date(now).toISOString(),
      disclosure: defaults.enabled ? defaults.text : null,
      photos: rows,
    },
    null,
    2,
  );
  const enc = new TextEncoder();
  async function* entries(): AsyncGenerator<ZipEntry> {
    yield { name: "manifest.json", modifiedAt: now, open: async () => enc.encode(json) };
    yield { name: "manifest.csv", modifiedAt: now, open: async () => enc.encode(manifestCsv(rows)) };
    for (const p of plan) {
      if (p.staged) yield p.staged;
      yield p.original;
    }
  }
  const zip = zipStream(entries());
  const fileName = `${safeFileName(folder.name)} listing pack.zip`;
  return ok({ fileName, stream: zip.stream, peakBuffered: zip.peakBuffered });
}

// ---- a folder's listing details ----

const optionalText = (label: string, max: number) =>
  z
    .string({ message: `${label} must be text.` })
    .trim()
    .max(max, `${label} must be at most ${max} characters.`)
    .refine((s) => !hasControlCharacters(s), `${label} contains characters that are not allowed.`)
    .nullish()
    .transform((s) => (s ? s : null));

export const listingInput = z.object({
  address: optionalText("The listing address", 200),
  mlsNumber: optionalText("The MLS number", 40).refine(
    (s) => s === null || /^[A-Za-z0-9][A-Za-z0-9 ._#/-]*$/.test(s),
    "The MLS number can use letters, digits, spaces and . _ # / -.",
  ),
});

export async function saveListing(
  db: Database,
  userId: string,
  folderId: string,
  input: z.infer<typeof listingInput>,
): Promise<Result> {
  const res = await db
    .update(folders)
    .set({ listingAddress: input.address, mlsNumber: input.mlsNumber })
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId)))
    .returning({ id: folders.id });
  return res.length ? ok({}) : NOT_FOUND;
}
