import { z } from "zod";
import { lookStrengthLabel } from "~/shared/listing-look";
import { type Failure, fail, ok, type Result } from "~/shared/result";
import { DEFAULT_FOLDER_NAME } from "~/shared/upload-rules";
import { deleteFolder, deletePhotoForever, emptyTrash, movePhoto, restorePhoto, trashPhoto } from "./library";
import { clearLook, setLookStrength } from "./listing-look";
import { trashWarning } from "./mls/listing-status";
import type { Deps } from "./request-deps";
import { createFolderWithin, createTeamFolder, moveFolderToTeam } from "./teams/listings";

// The library's form actions on /dashboard (folders, moving, trash, a listing's look), each a
// closed intent checked by `libraryActionInput` and answered with the message
// the page shows. The route parses the form and maps the result; the rules
// and the words live here.

const id = z.string().regex(/^[a-z0-9]{1,64}$/);

export const libraryActionInput = z.discriminatedUnion("intent", [
  // teamId: a listing of that team (any active member), shared with its members (ADR 0280).
  z.object({
    intent: z.literal("create-folder"),
    name: z.string().max(500).optional(),
    teamId: z.union([id, z.literal("")]).optional(),
  }),
  // A personal folder, with its photos, into the team's listings (the team's owner or a team admin).
  z.object({ intent: z.literal("folder-to-team"), folderId: id, teamId: id }),
  z.object({ intent: z.literal("delete-folder"), folderId: id }),
  z.object({ intent: z.literal("move"), photoId: id, folderId: z.union([id, z.literal("")]) }),
  // confirm=1: trash it even though its original page advertises an active listing (it was warned).
  z.object({ intent: z.literal("trash"), photoId: id, confirm: z.literal("1").optional() }),
  z.object({ intent: z.literal("restore"), photoId: id }),
  z.object({ intent: z.literal("delete-forever"), photoId: id }),
  z.object({ intent: z.literal("empty-trash") }),
  // The listing's look (docs/decisions/0190-one-look-for-a-listing.md): how closely it is followed, or cleared.
  z.object({ intent: z.literal("look-strength"), folderId: id, strength: z.string().max(8) }),
  z.object({ intent: z.literal("clear-look"), folderId: id }),
]);

export type LibraryAction = z.infer<typeof libraryActionInput>;

/** Said when the form names something that is not there or not the user's: the two look the same. */
export const LIBRARY_NOT_FOUND = "That photo or folder was not found. It may have been moved or deleted.";
/** Said when the form is not one of the intents above. */
export const LIBRARY_NOT_UNDERSTOOD = "That request was not understood.";
export const TEAM_LISTING_NOT_DELETED =
  "A team's listing belongs to the team: its photos stay in it, so it cannot be deleted.";

export type LibraryActionResult =
  | Result<{
      message: string;
      /** Set by delete-folder, so a page showing that folder can move elsewhere. */
      deletedFolderId?: string;
    }>
  | (Failure & {
      /** The same request, to send again with confirm=1 once the person has read the warning. */
      ask: { intent: "trash"; photoId: string };
    });

const found = (done: boolean, message: string): LibraryActionResult =>
  done ? ok({ message }) : fail("not_found", LIBRARY_NOT_FOUND);

export async function runLibraryAction(
  deps: Pick<Deps, "db" | "bucket">,
  userId: string,
  input: LibraryAction,
): Promise<LibraryActionResult> {
  const { db, bucket } = deps;
  switch (input.intent) {
    case "create-folder": {
      if (input.teamId) {
        const made = await createTeamFolder(db, userId, input.teamId, input.name ?? DEFAULT_FOLDER_NAME);
        if (!made.ok) return made.code === "conflict" ? made : fail("not_found", LIBRARY_NOT_FOUND);
        return ok({ message: `Team listing "${made.folder.name}" created.` });
      }
      const made = await createFolderWithin(db, userId, input.name ?? DEFAULT_FOLDER_NAME);
      if (!made.ok) return made;
      return ok({ message: `Folder "${made.folder.name}" created.` });
    }
    case "folder-to-team": {
      const moved = await moveFolderToTeam(db, userId, input.folderId, input.teamId);
      if (!moved.ok) return moved.code === "not_found" ? fail("not_found", LIBRARY_NOT_FOUND) : moved;
      return ok({ message: `"${moved.name}" now belongs to the team: every member sees it.` });
    }
    case "delete-folder": {
      const deleted = await deleteFolder(db, userId, input.folderId);
      if (deleted === "not-found") return fail("not_found", LIBRARY_NOT_FOUND);
      if (deleted === "team") return fail("conflict", TEAM_LISTING_NOT_DELETED);
      return ok({
        message: "Folder deleted. Its photos are now under Unassigned Photos.",
        deletedFolderId: input.folderId,
      });
    }
    case "move": {
      const res = await movePhoto(db, userId, input.photoId, input.folderId || null);
      return found(res === "moved", input.folderId ? "Photo moved." : "Photo moved to Unassigned Photos.");
    }
    case "trash": {
      // Its original page would close while its listing still advertises: warn first (docs/decisions/0170).
      const warned = input.confirm ? null : await trashWarning(db, userId, input.photoId);
      if (warned && !warned.ok) return { ...warned, ask: { intent: "trash", photoId: input.photoId } };
      return found(await trashPhoto(db, userId, input.photoId), "Photo moved to the trash.");
    }
    case "restore":
      return found(await restorePhoto(db, userId, input.photoId), "Photo restored.");
    case "delete-forever":
      return found(await deletePhotoForever(db, bucket, userId, input.photoId), "Photo deleted for good.");
    case "look-strength": {
      const res = await setLookStrength(db, userId, input.folderId, input.strength);
      if (!res.ok) return res.code === "not_found" ? fail("not_found", LIBRARY_NOT_FOUND) : res;
      return ok({ message: `Photos now follow the listing's look: ${lookStrengthLabel(res.strength)}.` });
    }
    case "clear-look":
      return found(
        await clearLook(db, userId, input.folderId),
        "The listing's look is cleared: photos staged from now on no longer follow it.",
      );
    case "empty-trash": {
      const n = await emptyTrash(db, bucket, userId);
      return ok({ message: n === 1 ? "1 photo deleted for good." : `${n} photos deleted for good.` });
    }
  }
}
