import type { Database } from "@db/client";
import { type Batch, batches, type Folder, folders, type Photo, photos, users } from "@db/schema";
import { eq, getTableColumns, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { LibraryView, PhotoCard } from "~/shared/library-view";
import type { LookView } from "~/shared/listing-look";
import { type BatchView, batchViews, recentBatchesQuery } from "./jobs/batches";
import { decodeCursor, folderQuery, foldersQuery, photoPage, photoPageQuery, type ViewFilter } from "./library";
import { folderLook } from "./listing-look";
import type { SessionReads } from "./sessions";

// What /dashboard reads for one view of the library
// (docs/decisions/0144-dashboard-reads-with-the-session.md): the folders, the first
// page of photos, the last day's batches and the folder shown (for a folder
// view), each as one JSON column of a row of the user. On a page load those
// columns are read in the same statement as the session (libraryReads, from
// the root middleware), so the page costs one D1 statement in one round trip;
// otherwise (a POST's loaders, a preload for another view) the loader reads
// them from the user's row on its own. The batches' jobs are a second read
// only when there is a recent batch (seldom), the folder's look only when the
// folder shown has one. The balance comes from the
// session's read of the user (CurrentUser.live): nothing here reads it again.

export interface LibraryPage {
  /** The user's folders and their teams' listings; `team` names the team a listing belongs to (ADR 0280). */
  folders: (Pick<Folder, "id" | "name"> & { team?: string })[];
  page: { photos: PhotoCard[]; nextCursor: string | null };
  /** The folder shown; null for another view, undefined for a folder that is not the user's. */
  folder: Folder | null | undefined;
  batches: BatchView[];
  /** The folder's look, when the folder shown has one (a second read only then). */
  look: LookView | null;
}

export interface LibraryQuery {
  view: LibraryView;
  cursor: string | null;
}

/** The library's columns as read with a user's row (JSON text, parsed by libraryPageFrom). */
export type LibraryColumns = Record<string, unknown>;

const DAY_MS = 24 * 60 * 60 * 1000;
/** Batches still running or with failures to retry are shown again for a day, at most this many. */
const RECENT_BATCHES = 3;

/** Each column's key in the schema's row, its SQL name, and how its value comes back from the driver. */
type Columns = [key: string, name: string, fromDriver?: (value: unknown) => unknown][];
const columnsOf = (table: SQLiteTable): Columns =>
  Object.entries(getTableColumns(table)).map(([key, column]) => [
    key,
    column.name,
    (value: unknown) => column.mapFromDriverValue(value),
  ]);
const PHOTO_COLUMNS = columnsOf(photos);
const BATCH_COLUMNS = columnsOf(batches);
const FOLDER_COLUMNS = columnsOf(folders);
const FOLDER_LIST_COLUMNS: Columns = [
  ["id", "id"],
  ["name", "name"],
  ["createdAt", "created_at"],
  ["teamName", "team_name"],
];

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A query's rows as one JSON array of arrays, the columns in the order given (SQLite's json_group_array). */
function rowsAsJson(query: SQLWrapper, columns: Columns, alias: string): SQL.Aliased<string> {
  const values = sql.raw(columns.map(([, name]) => `r.${quoted(name)}`).join(", "));
  return sql<string>`(select json_group_array(json_array(${values})) from (${query}) as r)`.as(alias);
}

/** Rows back from rowsAsJson, as objects with the schema's keys. */
function rowsFromJson<T>(text: unknown, columns: Columns): T[] {
  if (typeof text !== "string") return [];
  return (JSON.parse(text) as unknown[][]).map((values) =>
    Object.fromEntries(
      columns.map(([key, , fromDriver], i) => {
        const value = values[i] ?? null;
        return [key, value === null || !fromDriver ? value : fromDriver(value)];
      }),
    ),
  ) as T[];
}

/** Newest first, as the queries order them (an aggregate does not promise to keep its input's order). */
const newestFirst = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * The library's columns for one view, read with the row of the session's user (docs/decisions/0144): each a JSON
 * column, with placeholders for every value, so that the statement of each shape (the view's kind, a first page or a
 * later one: eight in all) is built by drizzle once per database and only bound after.
 */
export function libraryReads(q: LibraryQuery, now = Date.now()): SessionReads {
  const after = decodeCursor(q.cursor);
  const view: ViewFilter =
    q.view.kind === "folder" ? { kind: "folder", folderId: sql.placeholder("folderId") } : q.view;
  return {
    key: `library:${q.view.kind}:${after ? "after" : "first"}`,
    columns: (db, user) => ({
      libFolders: rowsAsJson(foldersQuery(db, user), FOLDER_LIST_COLUMNS, "lib_folders"),
      libPhotos: rowsAsJson(
        photoPageQuery(db, user, view, {
          after: after ? { createdAt: sql.placeholder("afterCreatedAt"), id: sql.placeholder("afterId") } : null,
        }),
        PHOTO_COLUMNS,
        "lib_photos",
      ),
      // Only the last day's batches: with none (the usual case) there is no read of their jobs.
      libBatches: rowsAsJson(
        recentBatchesQuery(db, user, RECENT_BATCHES, sql.placeholder("since")),
        BATCH_COLUMNS,
        "lib_batches",
      ),
      ...(view.kind === "folder"
        ? { libFolder: rowsAsJson(folderQuery(db, user, view.folderId), FOLDER_COLUMNS, "lib_folder") }
        : {}),
    }),
    values: {
      folderId: q.view.kind === "folder" ? q.view.folderId : null,
      afterCreatedAt: after?.createdAt ?? null,
      afterId: after?.id ?? null,
      since: now - DAY_MS,
    },
  };
}

/** The page from libraryReads' values (same view): at most one more read, for recent batches' jobs. */
async function libraryPageFrom(db: Database, q: LibraryQuery, values: LibraryColumns): Promise<LibraryPage> {
  // Folders keep their creation time for the order only.
  const folderList = rowsFromJson<{ id: string; name: string; createdAt: number; teamName: string | null }>(
    values.libFolders,
    FOLDER_LIST_COLUMNS,
  ).sort(newestFirst);
  const folder = q.view.kind === "folder" ? rowsFromJson<Folder>(values.libFolder, FOLDER_COLUMNS)[0] : null;
  return {
    folders: folderList.map(({ id, name, teamName }) => (teamName ? { id, name, team: teamName } : { id, name })),
    page: photoPage(rowsFromJson<Photo>(values.libPhotos, PHOTO_COLUMNS).sort(newestFirst)),
    folder,
    batches: await batchViews(db, rowsFromJson<Batch>(values.libBatches, BATCH_COLUMNS).sort(newestFirst)),
    look: folder?.lookVersionId ? await folderLook(db, folder.userId, folder.id) : null,
  };
}

/** The library's columns read with the session's (`preloaded`, same view), or read now from the user's row. */
export async function libraryPage(
  db: Database,
  userId: string,
  q: LibraryQuery,
  preloaded?: LibraryPreload | null,
): Promise<LibraryPage> {
  const reads = preloaded && sameQuery(preloaded.query, q) ? null : libraryReads(q);
  const values = reads
    ? await db.select(reads.columns(db, users.id)).from(users).where(eq(users.id, userId)).prepare().get(reads.values)
    : preloaded?.values;
  return libraryPageFrom(db, q, values ?? {});
}

/** The values of libraryReads read in the session's statement, with the view they are for. */
export interface LibraryPreload {
  query: LibraryQuery;
  values: LibraryColumns;
}

function sameQuery(a: LibraryQuery, b: LibraryQuery): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
