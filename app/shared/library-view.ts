// Which part of the library the dashboard shows, and its address.

export type LibraryView =
  | { kind: "all" }
  | { kind: "unassigned" }
  | { kind: "trash" }
  | { kind: "folder"; folderId: string };

export function viewFromSearch(params: URLSearchParams): LibraryView {
  const folder = params.get("folder");
  if (folder && /^[a-z0-9]{1,64}$/.test(folder)) return { kind: "folder", folderId: folder };
  const view = params.get("view");
  if (view === "unassigned" || view === "trash") return { kind: view };
  return { kind: "all" };
}

/** The dashboard address of a view, with extra query parameters. */
export function viewHref(view: LibraryView, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (view.kind === "folder") params.set("folder", view.folderId);
  else if (view.kind !== "all") params.set("view", view.kind);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const q = params.toString();
  return q ? `/dashboard?${q}` : "/dashboard";
}

export function sameView(a: LibraryView, b: LibraryView): boolean {
  return a.kind === b.kind && (a.kind !== "folder" || (b.kind === "folder" && a.folderId === b.folderId));
}

/**
 * Why paid work on a photo in the trash is refused (keep, stage, re-roll, removal, sky, variations, the brush, a
 * batch, a retry, the public API): said before anything is reserved or written (docs/decisions/0202).
 */
export function inTrashMessage(photoName: string): string {
  return `"${photoName}" is in the trash: restore it first to stage, keep or change it. Nothing was charged.`;
}

/** What the grid shows of a photo (never a storage key). */
export interface PhotoCard {
  id: string;
  name: string;
  createdAt: number;
  trashedAt: number | null;
  folderId: string | null;
  processed: boolean;
  thumbUrl: string;
  thumbWidth: number;
  thumbHeight: number;
}

/** The photo view's address: the photo, within the library view it was opened from (its neighbours are that view's). */
export function photoHref(photoId: string, view: LibraryView, extra?: Record<string, string>): string {
  // The grid's common case (All Photos, nothing extra) needs no query string: one card each, so no URLSearchParams.
  if (view.kind === "all" && !extra) return `/photos/${photoId}`;
  const params = new URLSearchParams();
  if (view.kind === "folder") params.set("folder", view.folderId);
  else if (view.kind !== "all") params.set("view", view.kind);
  for (const [k, v] of Object.entries(extra ?? {})) params.set(k, v);
  const q = params.toString();
  return q ? `/photos/${photoId}?${q}` : `/photos/${photoId}`;
}

/** What a card's buttons ask of its photo. */
export const CARD_INTENTS = ["trash", "restore", "delete-forever", "move"] as const;
export type CardIntent = (typeof CARD_INTENTS)[number];

/** The grid's one form: every card's buttons and folder choice belong to it (docs/decisions/0332-one-form-for-the-grid.md). */
export const CARD_FORM_ID = "library-card-actions";

/** The name of a card's folder choice in the grid's form: one per photo, since every card's choice is posted. */
export function cardFolderField(photoId: string): string {
  return `folder-${photoId}`;
}

/**
 * The grid's form as the browser posts it without JavaScript, turned into the library's own fields: the pressed
 * button's name is the intent and its value the photo, and a move takes that photo's folder choice (the other cards'
 * choices are left out). A request that names an intent, or more than one card button, is handed on as it came, for
 * the library's schema to accept or refuse.
 */
export function fromCardForm(fields: Record<string, string>): Record<string, string> {
  if (fields.intent !== undefined) return fields;
  const pressed = CARD_INTENTS.filter((i) => fields[i] !== undefined);
  const intent = pressed[0];
  if (pressed.length !== 1 || intent === undefined) return fields;
  const photoId = fields[intent] ?? "";
  const folderId = fields[cardFolderField(photoId)];
  return intent === "move" && folderId !== undefined ? { intent, photoId, folderId } : { intent, photoId };
}
