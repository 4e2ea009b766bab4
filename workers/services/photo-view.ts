import type { Database } from "@db/client";
import { type Photo, photos } from "@db/schema";
import { and, asc, desc, eq, gt, lt, or } from "drizzle-orm";
import type { LibraryView } from "~/shared/library-view";
import { toVersionView, type VersionView } from "~/shared/version-view";
import { listVersions } from "./jobs/versions";
import { listFolders, viewFilter } from "./library";
import { photoAccess } from "./teams/access";

// What the photo view (/photos/:id) reads: the photo, its versions, its folders for "Move", and the photos before and
// after it in the library view it was opened from (the grid's order: newest first), so the arrow keys and a swipe
// step through the same list. Another user's photo is not found, exactly like one that does not exist; a team
// listing's photo is every active member's, read under its uploader's scope (docs/decisions/0280, 0298).

export interface PhotoViewData {
  photo: {
    id: string;
    name: string;
    folderId: string | null;
    trashed: boolean;
    width: number;
    height: number;
    thumbUrl: string;
    originalUrl: string;
    downloadUrl: string;
  };
  versions: VersionView[];
  folders: { id: string; name: string }[];
  /** The newer photo (shown before it in the grid) and the older one (after it); null at either end. */
  previous: string | null;
  next: string | null;
}

/** The photo shown just before (`newer`) or after (`older`) this one in the view's newest-first order. */
async function neighbour(db: Database, userId: string, view: LibraryView, p: Photo, side: "newer" | "older") {
  const cmp = side === "newer" ? gt : lt;
  const order = side === "newer" ? asc : desc;
  const row = await db
    .select({ id: photos.id })
    .from(photos)
    .where(
      and(
        viewFilter(userId, view),
        or(cmp(photos.createdAt, p.createdAt), and(eq(photos.createdAt, p.createdAt), cmp(photos.id, p.id))),
      ),
    )
    .orderBy(order(photos.createdAt), order(photos.id))
    .limit(1)
    .get();
  return row?.id ?? null;
}

export async function photoView(
  db: Database,
  userId: string,
  photoId: string,
  view: LibraryView,
): Promise<PhotoViewData | null> {
  if (!/^[a-z0-9]{1,64}$/.test(photoId)) return null;
  const scope = await photoAccess(db, userId, photoId);
  if (!scope) return null;
  const p = scope.photo;
  const [versions, folders, previous, next] = await Promise.all([
    listVersions(db, scope.ownerId, p.id),
    listFolders(db, userId),
    neighbour(db, userId, view, p, "newer"),
    neighbour(db, userId, view, p, "older"),
  ]);
  return {
    photo: {
      id: p.id,
      name: p.name,
      folderId: p.folderId,
      trashed: p.trashedAt !== null,
      width: p.width,
      height: p.height,
      thumbUrl: `/api/photos/${p.id}/thumb?v=${p.processedAt ?? 0}`,
      originalUrl: `/api/photos/${p.id}/original`,
      downloadUrl: `/api/photos/${p.id}/download`,
    },
    versions: versions.map((v) => toVersionView(v, p.processedKey)),
    folders,
    previous,
    next,
  };
}
