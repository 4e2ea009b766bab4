import { checkFields } from "@workers/http/body";
import { libraryActionInput } from "@workers/services/library-actions";
import { describe, expect, it } from "vitest";
import { cardFolderField, fromCardForm } from "~/shared/library-view";

// The grid's one form as a browser without JavaScript posts it (docs/decisions/0332-one-form-for-the-grid.md): the
// pressed button names the intent and the photo, every card's folder choice comes along, and the library's schema
// sees only what the pressed button asked.

const parse = (fields: Record<string, string>) => checkFields(libraryActionInput, fromCardForm(fields));
const everyCard = { [cardFolderField("p1")]: "f1", [cardFolderField("p2")]: "f2", [cardFolderField("p3")]: "" };

describe("the grid's one form", () => {
  it("turns the pressed button into the library's intent and photo", () => {
    expect(parse({ trash: "p2", ...everyCard })).toEqual({ ok: true, data: { intent: "trash", photoId: "p2" } });
    expect(parse({ restore: "p1" })).toEqual({ ok: true, data: { intent: "restore", photoId: "p1" } });
    expect(parse({ "delete-forever": "p3", ...everyCard })).toEqual({
      ok: true,
      data: { intent: "delete-forever", photoId: "p3" },
    });
  });

  it("moves the pressed card's photo to that card's choice, never another card's", () => {
    expect(parse({ move: "p2", ...everyCard })).toEqual({
      ok: true,
      data: { intent: "move", photoId: "p2", folderId: "f2" },
    });
    expect(parse({ move: "p3", ...everyCard })).toEqual({
      ok: true,
      data: { intent: "move", photoId: "p3", folderId: "" },
    });
  });

  it("refuses a move without that card's choice, two buttons at once, and hostile names", () => {
    // Without the card's own choice nothing says where: not "Unassigned" by default.
    expect(parse({ move: "p9", ...everyCard }).ok).toBe(false);
    expect(parse({ trash: "p1", restore: "p2" }).ok).toBe(false);
    expect(parse({ trash: "../../p1" }).ok).toBe(false);
    expect(parse({ move: "__proto__", folder___proto__: "f1" }).ok).toBe(false);
    expect(parse({ move: "p1", [cardFolderField("p1")]: "<script>" }).ok).toBe(false);
    expect(parse({}).ok).toBe(false);
  });

  it("leaves a request that names its intent as it came", () => {
    const fields = { intent: "empty-trash", trash: "p1" };
    expect(fromCardForm(fields)).toBe(fields);
    expect(parse({ intent: "trash", photoId: "p1", confirm: "1", move: "p2" })).toEqual({
      ok: true,
      data: { intent: "trash", photoId: "p1", confirm: "1" },
    });
  });
});
