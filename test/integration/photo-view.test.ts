import { teamMembers } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { makePhoto, makePhotoRows } from "@test/support/photos";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { createFolder, movePhoto, trashPhoto } from "@workers/services/library";
import { photoView } from "@workers/services/photo-view";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The photo view's reads (its neighbours are the grid's, in the view it was opened from; docs/decisions/0187-photo-view.md).
// The landing page's measured figures, once here, are in site-figures.test.ts.

describe("the photo view's reads", () => {
  it("steps through the view newest first, and another user's photo is not found", async () => {
    const { id } = await makeUser();
    const rows = await makePhotoRows(id, 4, (i) => 1000 + i); // rows[3] is the newest
    const [oldest, , second, newest] = rows;
    const top = await photoView(db, id, newest!.id, { kind: "all" });
    expect(top).toMatchObject({ previous: null, next: second!.id });
    const bottom = await photoView(db, id, oldest!.id, { kind: "all" });
    expect(bottom?.next).toBeNull();
    // A folder view steps through that folder only.
    const folder = await createFolder(db, id, "Kitchen");
    await movePhoto(db, id, newest!.id, folder.id);
    await movePhoto(db, id, oldest!.id, folder.id);
    expect(await photoView(db, id, newest!.id, { kind: "folder", folderId: folder.id })).toMatchObject({
      previous: null,
      next: oldest!.id,
    });
    // The trash is its own view.
    await trashPhoto(db, id, second!.id);
    expect(await photoView(db, id, second!.id, { kind: "trash" })).toMatchObject({
      previous: null,
      next: null,
      photo: { trashed: true },
    });

    const stranger = await makeUser();
    expect(await photoView(db, stranger.id, newest!.id, { kind: "all" })).toBeNull();
    expect(await photoView(db, id, "not an id", { kind: "all" })).toBeNull();
  });

  it("a team listing's photo is every active member's to view, with its versions; not once removed (ADR 0280)", async () => {
    const owner = await makeUser();
    const teamId = await makeTeam(owner.id);
    const uploader = await makeUser();
    const mate = await makeUser();
    await addMember(teamId, uploader.id);
    await addMember(teamId, mate.id);
    const folderId = await teamFolder(teamId, uploader.id);
    const photo = await makePhoto(uploader.id, { folderId, name: "Porch.jpg" });
    expect(await photoView(db, mate.id, photo.id, { kind: "folder", folderId })).toMatchObject({
      photo: { id: photo.id, name: "Porch.jpg", folderId },
      versions: [],
    });
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, mate.id)));
    expect(await photoView(db, mate.id, photo.id, { kind: "all" })).toBeNull();
  });
});
