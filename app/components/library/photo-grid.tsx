import { useEffect, useRef, useState } from "react";
import { Link, useFetcher, useFormAction, useSubmit } from "react-router";
import { formatDate } from "~/lib/format";
import {
  CARD_FORM_ID,
  type CardIntent,
  cardFolderField,
  type PhotoCard as LibraryPhotoCard,
  type LibraryView,
  photoHref,
  sameView,
  viewFromSearch,
} from "~/shared/library-view";
import { type ActionAnswer, ActionMessage } from "./action-message";

// The service's card type, imported as a type only: nothing of the service
// reaches the browser bundle.
export type GridPhoto = LibraryPhotoCard;

export interface GridFolder {
  id: string;
  name: string;
}

// On touch screens the actions sit under the name, always visible; on devices that hover they lie over the card's
// name and date and show on hover or keyboard focus (the card-actions utility of app.css, ADR 0187).
const SMALL = "min-h-9 px-3 py-1 text-xs";

/** One card button: posts the grid's form with this photo as the value of the intent's name (works without JavaScript). */
function PhotoAction({
  photo,
  intent,
  label,
  confirm,
  className = "btn-danger",
  children,
}: {
  photo: GridPhoto;
  intent: Exclude<CardIntent, "move">;
  label: string;
  confirm?: string;
  className?: string;
  children: React.ReactNode;
}) {
  return (
    <button
      type="submit"
      form={CARD_FORM_ID}
      name={intent}
      value={photo.id}
      className={`${className} ${SMALL}`}
      aria-label={label}
      data-confirm={confirm}
    >
      {children}
    </button>
  );
}

/** Whether an action just sent on a card takes the photo out of the view being shown. */
function leavesView(view: LibraryView, form: FormData | undefined): boolean {
  const intent = form?.get("intent");
  if (intent === "trash" || intent === "restore" || intent === "delete-forever") return true;
  if (intent !== "move") return false;
  const target = String(form?.get("folderId") ?? "");
  if (view.kind === "unassigned") return target !== "";
  if (view.kind === "folder") return target !== view.folderId;
  return false;
}

/** Whether a card's request was sent from `view` (its form posts to the page as addressed, view included). */
function sentFrom(formAction: string | undefined, view: LibraryView): boolean {
  if (!formAction) return false;
  return sameView(viewFromSearch(new URL(formAction, "http://x").searchParams), view);
}

/** A card's fetcher key: the grid's one form sends a card's request through that card's fetcher. */
const cardKey = (photoId: string) => `card-${photoId}`;

/**
 * The cards whose thumbnails load eagerly: the first row at every width (2, 3 or 4 columns), which is on the first
 * screen (a phone shows the first row's top half, ADR 0133). An eager image is fetched as soon as the browser's
 * preload scanner reads its tag; a lazy one only after layout, a round trip later on a slow phone. The rest stay
 * lazy, so a library of hundreds loads what is scrolled to.
 */
export const EAGER_THUMBS = 4;

function PhotoCard({
  photo,
  view,
  folders,
  eager,
  action,
}: {
  photo: GridPhoto;
  view: LibraryView;
  folders: GridFolder[];
  eager: boolean;
  /** The grid's form's action, the same for every card. */
  action: string;
}) {
  // Keyed by the photo, so the grid's one form can send a card's request through it (PhotoGrid).
  const fetcher = useFetcher<ActionAnswer>({ key: cardKey(photo.id) });
  // A request hides its card only in the view it was sent from: the Trash opened while a delete is on its way shows
  // the photo the moment the server has it there (docs/decisions/0356).
  const live = fetcher.formData && sentFrom(fetcher.formAction, view) ? fetcher.formData : undefined;
  const [sent, setSent] = useState<FormData | undefined>(undefined);
  useEffect(() => {
    if (live) setSent(live);
  }, [live]);
  const pending = live ?? (fetcher.data?.ok ? sent : undefined);
  if (leavesView(view, pending)) return null;
  const inTrash = photo.trashedAt !== null;
  const thumb = (
    <img
      src={photo.thumbUrl}
      width={photo.thumbWidth}
      height={photo.thumbHeight}
      alt={photo.name}
      loading={eager ? undefined : "lazy"}
      decoding="async"
      className="aspect-[4/3] w-full bg-slate-100 object-cover"
    />
  );
  return (
    <li
      className="group relative overflow-hidden rounded-xl border border-line bg-white shadow-sm"
      data-testid="photo-card"
      data-photo-id={photo.id}
    >
      {/* The whole thumbnail opens the photo view: a plain link, so it works before JavaScript and in a new tab. */}
      <Link
        to={photoHref(photo.id, view)}
        state={{ fromLibrary: true }}
        className="block w-full"
        aria-label={`Open ${photo.name}`}
        data-testid="photo-open"
      >
        {thumb}
      </Link>
      <div className="p-3">
        <div className="flex items-baseline justify-between gap-2">
          <p className="truncate text-sm font-semibold" title={photo.name} data-testid="photo-name">
            {photo.name}
          </p>
          {photo.processed ? <span className="shrink-0 text-xs font-semibold text-brand-600">AI Enhanced</span> : null}
        </div>
        <p className="text-xs text-muted">
          <time dateTime={new Date(photo.createdAt).toISOString()}>{formatDate(photo.createdAt)}</time>
        </p>
      </div>
      <div className="card-actions" data-testid="photo-actions">
        <a
          href={`/api/photos/${photo.id}/download`}
          download
          className={`btn-secondary ${SMALL}`}
          aria-label={`Download ${photo.name}`}
        >
          Download
        </a>
        {inTrash ? (
          <>
            <PhotoAction photo={photo} intent="restore" label={`Restore ${photo.name}`} className="btn-secondary">
              Restore
            </PhotoAction>
            <PhotoAction
              photo={photo}
              intent="delete-forever"
              label={`Delete ${photo.name} forever`}
              confirm={`Delete "${photo.name}" for good? This cannot be undone.`}
            >
              Delete forever
            </PhotoAction>
          </>
        ) : (
          <>
            <PhotoAction photo={photo} intent="trash" label={`Delete ${photo.name}`}>
              Delete
            </PhotoAction>
            {/* Refused with a warning (its original page advertises a listing): say why, offer to go on. */}
            {fetcher.data && !fetcher.data.ok && fetcher.state === "idle" ? (
              <div className="basis-full">
                <ActionMessage answer={fetcher.data} as={fetcher.Form} compact />
              </div>
            ) : null}
            {/* The choice and its button stay together on one line of the strip. */}
            <span className="flex items-center gap-1">
              <select
                form={CARD_FORM_ID}
                name={cardFolderField(photo.id)}
                aria-label={`Move ${photo.name} to`}
                value={String(pending?.get("folderId") ?? photo.folderId ?? "")}
                onChange={(e) =>
                  fetcher.submit(
                    { intent: "move", photoId: photo.id, folderId: e.currentTarget.value },
                    { method: "post", action },
                  )
                }
                className="min-h-9 max-w-36 rounded-lg border border-slate-300 bg-white px-2 text-xs"
              >
                <option value="">Unassigned</option>
                {folders.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
              {/* With JavaScript the choice applies at once; without, this button sends it. */}
              <noscript>
                <button
                  type="submit"
                  form={CARD_FORM_ID}
                  name="move"
                  value={photo.id}
                  className={`btn-secondary ${SMALL}`}
                >
                  Move
                </button>
              </noscript>
            </span>
          </>
        )}
      </div>
    </li>
  );
}

interface Page {
  photos: GridPhoto[];
  nextCursor: string | null;
}

function olderThan(a: string, b: string): boolean {
  const [ta = "", ia = ""] = a.split("-");
  const [tb = "", ib = ""] = b.split("-");
  return Number(ta) < Number(tb) || (Number(ta) === Number(tb) && ia < ib);
}

/**
 * The grid: the first page from the loader, and with JavaScript "Load more"
 * appends the next pages in place (without it, the link opens the next page).
 */
export function PhotoGrid({
  page,
  view,
  folders,
  moreHref,
  emptyText,
}: {
  page: Page;
  view: LibraryView;
  folders: GridFolder[];
  moreHref: (cursor: string) => string;
  emptyText: string;
}) {
  const more = useFetcher<{ page: Page }>();
  // The grid's one form posts to this page as it is addressed (its view and cursor).
  const action = useFormAction();
  const submit = useSubmit();
  // A card's button or the Move button without JavaScript: the same request, sent as the card's own (the server
  // reads the form posted without JavaScript with fromCardForm).
  const onSubmit = (e: React.FormEvent<HTMLFormElement>) => {
    const button = (e.nativeEvent as SubmitEvent).submitter;
    if (!(button instanceof HTMLButtonElement)) return;
    e.preventDefault();
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
    const photoId = button.value;
    const body: Record<string, string> = { intent: button.name, photoId };
    if (button.name === "move")
      body.folderId = String(new FormData(e.currentTarget).get(cardFolderField(photoId)) ?? "");
    void submit(body, { method: "post", action, navigate: false, fetcherKey: cardKey(photoId) });
  };

  const requested = useRef<string | null>(null);
  const [extra, setExtra] = useState<{ anchor: string; pages: { cursor: string; page: Page }[] } | null>(null);
  const firstNext = page.nextCursor;

  // Each answer fills the page it was asked for. React Router reloads the
  // last one after every change, which then replaces it rather than repeating it.
  useEffect(() => {
    const loaded = more.data?.page;
    const cursor = requested.current;
    if (!loaded || !cursor) return;
    setExtra((prev) => ({
      anchor: prev?.anchor ?? firstNext ?? "",
      pages: [...(prev?.pages ?? []).filter((p) => p.cursor !== cursor), { cursor, page: loaded }],
    }));
  }, [more.data, firstNext]);

  // After a change the first page may end earlier (a photo was added at the
  // top): the pages loaded after it would leave a gap, so they are dropped.
  const keepExtra =
    extra !== null &&
    extra.pages.length > 0 &&
    firstNext !== null &&
    (firstNext === extra.anchor || olderThan(firstNext, extra.anchor));
  const all = [...page.photos, ...(keepExtra ? extra.pages.flatMap((p) => p.page.photos) : [])];
  const seen = new Set<string>();
  const photos: GridPhoto[] = [];
  for (const p of all) {
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    photos.push(p);
  }
  const next = keepExtra ? (extra.pages[extra.pages.length - 1]?.page.nextCursor ?? null) : firstNext;

  if (photos.length === 0) {
    return (
      <p className="rounded-2xl border border-dashed border-line p-10 text-center text-muted" data-testid="grid-empty">
        {emptyText}
      </p>
    );
  }
  return (
    <>
      {/* Empty: each card's buttons and folder choice belong to it through their form attribute. */}
      <form id={CARD_FORM_ID} method="post" action={action} hidden onSubmit={onSubmit} />
      <ul className="grid grid-cols-2 gap-3 sm:grid-cols-3 xl:grid-cols-4" data-testid="photo-grid">
        {photos.map((p, i) => (
          <PhotoCard key={p.id} photo={p} view={view} folders={folders} eager={i < EAGER_THUMBS} action={action} />
        ))}
      </ul>
      {next ? (
        <div className="mt-6 flex justify-center">
          <Link
            to={moreHref(next)}
            className="btn-secondary"
            preventScrollReset
            onClick={(e) => {
              e.preventDefault();
              if (more.state !== "idle") return;
              requested.current = next;
              void more.load(moreHref(next));
            }}
          >
            {more.state === "loading" ? "Loading…" : "Load more"}
          </Link>
        </div>
      ) : null}
    </>
  );
}
