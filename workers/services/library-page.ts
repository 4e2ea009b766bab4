import type { Database } from "@db/client";
import type { Batch, Folder, Photo } from "@db/schema";
import type { BatchItem } from "drizzle-orm/batch";
import type { LibraryView, PhotoCard } from "~/shared/library-view";
import { folderQuery, foldersQuery, photoPage, photoPageQuery } from "./library";
import { type BatchView, batchViews, recentBatchesQuery } from "./listing-jobs";
import type { UserRef } from "./sessions";

// What /dashboard reads for one view of the library
// (docs/decisions/0144-dashboard-reads-in-one-batch.md): the folders, the first
// page of photos, the folder shown (for a folder view) and the last day's
// batches, as one list of reads. On a page load they go in the same D1 batch as
// the session's own read (libraryReadsFor, from the root middleware), so the
// page costs one round trip; otherwise (a stale or missing preload) the loader
// runs them in one batch of their own. The batches' jobs are a second read only
// when there is a recent batch (seldom). The balance comes from the session's
// read of the user (CurrentUser.live): nothing here reads the user.

export interface LibraryPage {
  folders: Pick<Folder, "id" | "name">[];
  page: { photos: PhotoCard[]; nextCursor: string | null };
  /** The folder shown; null for another view, undefined for a folder that is not the user's. */
  folder: Folder | null | undefined;
  batches: BatchView[];
}

export interface LibraryQuery {
  view: LibraryView;
  cursor: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Batches still running or with failures to retry are shown again for a day, at most this many. */
const RECENT_BATCHES = 3;

/** The reads of one view, in the order libraryPageFrom expects their results. */
export function libraryReads(
  db: Database,
  user: UserRef,
  q: LibraryQuery,
  now = Date.now(),
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  return [
    foldersQuery(db, user),
    photoPageQuery(db, user, q.view, { cursor: q.cursor }),
    // Only the last day's batches: with none (the usual case) there is no read of their jobs.
    recentBatchesQuery(db, user, RECENT_BATCHES, now - DAY_MS),
    ...(q.view.kind === "folder" ? [folderQuery(db, user, q.view.folderId)] : []),
  ];
}

/** The page from the results of libraryReads (same view): at most one more read, for recent batches' jobs. */
async function libraryPageFrom(db: Database, q: LibraryQuery, results: unknown[]): Promise<LibraryPage> {
  const [folders, photoRows, batchRows, folderRows] = results as [
    Pick<Folder, "id" | "name">[],
    Photo[],
    Batch[],
    Folder[] | undefined,
  ];
  return {
    folders,
    page: photoPage(photoRows),
    folder: q.view.kind === "folder" ? folderRows?.[0] : null,
    batches: await batchViews(db, batchRows),
  };
}

/** The reads already made for this view with the session's (`preloaded`), or one batch of them now. */
export async function libraryPage(
  db: Database,
  userId: string,
  q: LibraryQuery,
  preloaded?: LibraryPreload | null,
): Promise<LibraryPage> {
  const results =
    preloaded && sameQuery(preloaded.query, q) ? preloaded.results : await db.batch(libraryReads(db, userId, q));
  return libraryPageFrom(db, q, results);
}

/** The results of libraryReads made in the session's batch, with the view they are for. */
export interface LibraryPreload {
  query: LibraryQuery;
  results: unknown[];
}

function sameQuery(a: LibraryQuery, b: LibraryQuery): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
