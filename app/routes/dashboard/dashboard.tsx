import { requireUser } from "@workers/http/auth";
import { checkFields, readFormFields } from "@workers/http/body";
import { getDeps, requestContext } from "@workers/http/context";
import { libraryPreload } from "@workers/http/page-reads";
import { failureData } from "@workers/http/result";
import { LIBRARY_NOT_UNDERSTOOD, libraryActionInput, runLibraryAction } from "@workers/services/library-actions";
import { libraryPage } from "@workers/services/library-page";
import { LISTING_INTENTS, listingActionInput, runListingAction } from "@workers/services/mls/listing-actions";
import { listingPanel } from "@workers/services/mls/listing-photos";
import { useState } from "react";
import { data, Form, Link, redirect, useRevalidator } from "react-router";
import { ActionMessage } from "~/components/library/action-message";
import { DashboardTopBar } from "~/components/library/dashboard-top-bar";
import { ListingLookPanel } from "~/components/library/listing-look-panel";
import { ListingPackPanel } from "~/components/library/listing-pack-panel";
import { PhotoGrid } from "~/components/library/photo-grid";
import { PendingUploads, UploadPanel } from "~/components/library/upload-panel";
import { PlanStatusCard } from "~/components/plan-status-card";
import { DesignerDialogOnDemand } from "~/components/staging/dialogs-on-demand";
import { useLiveCredits } from "~/lib/use-live-credits";
import { fromCardForm, type LibraryView, sameView, viewFromSearch, viewHref } from "~/shared/library-view";
import { DEFAULT_FOLDER_NAME } from "~/shared/upload-rules";
import type { Route } from "./+types/dashboard";

// Pages without the site's navigation and footer: the dashboard has its own top bar.
export const handle = { bareLayout: true };

export const meta: Route.MetaFunction = () => [{ title: "Dashboard · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const { db } = context.get(requestContext);
  const url = new URL(request.url);
  const view = viewFromSearch(url.searchParams);
  const cursor = url.searchParams.get("cursor");
  // Read in the session's own statement (workers/http/page-reads.ts), or in one statement now; the balance
  // is the session's read of the user.
  const { folders, page, folder, batches, look } = await libraryPage(
    db,
    user.id,
    { view, cursor },
    context.get(libraryPreload),
  );
  const initial = user.live;
  // Someone else's folder looks exactly like one that does not exist.
  if (view.kind === "folder" && !folder) throw data(null, { status: 404 });
  return {
    user: { name: user.name, email: user.email },
    initial,
    // Stripe sends people here after paying (success_url): say so while the webhook lands.
    justPaid: url.searchParams.get("checkout") === "success",
    folders,
    view,
    folderName: folder?.name ?? null,
    // The listing's profile, status and what its pack would leave out (one more read, on a folder's page only).
    listing: folder ? await listingPanel(db, user.id, folder) : null,
    look,
    page,
    paged: cursor !== null,
    // Batches still running, or finished within a day with failures to retry: shown again on return.
    batches: batches
      .filter((b) => b.open || b.counts.failed > 0)
      .map((b) => ({ id: b.id, open: b.open, counts: b.counts, total: b.items.length })),
    uploading: url.searchParams.get("upload") === "1" && view.kind === "all" && user.credits > 0,
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  if (LISTING_INTENTS.has(raw.fields.intent ?? "")) {
    // A listing's details, profile or status: each field's own message (docs/decisions/0170-mls-profiles.md).
    const input = checkFields(listingActionInput, raw.fields);
    if (!input.ok) return failureData(input);
    const done = await runListingAction(getDeps(context), user.id, input.data);
    if (!done.ok) return failureData(done);
    return data({ ok: true as const, message: done.message });
  }
  // The grid's one form, posted without JavaScript, names its intent by the pressed button (ADR 0332).
  const parsed = checkFields(libraryActionInput, fromCardForm(raw.fields));
  if (!parsed.ok) return failureData({ ...parsed, error: LIBRARY_NOT_UNDERSTOOD });
  const res = await runLibraryAction(getDeps(context), user.id, parsed.data);
  if (!res.ok) return failureData(res);
  // Deleting the folder being shown: its photos are now unassigned, so show them there.
  const shown = viewFromSearch(new URL(request.url).searchParams);
  if (res.deletedFolderId && shown.kind === "folder" && shown.folderId === res.deletedFolderId) {
    throw redirect(viewHref({ kind: "unassigned" }));
  }
  return data({ ok: true as const, message: res.message });
}

function viewTitle(view: LibraryView, folderName: string | null): string {
  if (view.kind === "unassigned") return "Unassigned Photos";
  if (view.kind === "trash") return "Trash";
  if (view.kind === "folder") return folderName ?? "Folder";
  return "All Photos";
}

function emptyText(view: LibraryView): string {
  if (view.kind === "trash") return "The trash is empty. Deleted photos stay here for 30 days.";
  if (view.kind === "folder") return "No photos in this folder yet. Move photos here from All Photos.";
  if (view.kind === "unassigned") return "Every photo is in a folder.";
  return "No photos yet. Upload a room photo to get started.";
}

/**
 * A view or folder of the library, marked current when it is the one shown. A plain Link: NavLink matches on the
 * path only, so it marked every view of /dashboard (?view=trash too) as the current page and overrode aria-current.
 */
function SideLink({ to, active, children }: { to: string; active: boolean; children: React.ReactNode }) {
  return (
    <Link
      to={to}
      aria-current={active ? "page" : undefined}
      className={`block rounded-lg px-3 py-2 text-sm font-medium ${active ? "bg-brand-50 text-brand-700" : "text-ink hover:bg-slate-100"}`}
    >
      {children}
    </Link>
  );
}

const VIEWS: [LibraryView, string][] = [
  [{ kind: "all" }, "All Photos"],
  [{ kind: "unassigned" }, "Unassigned Photos"],
  [{ kind: "trash" }, "Trash"],
];

/** All Photos, Unassigned Photos and Trash: in the sidebar, and in the phone's folder drawer. */
function ViewLinks({ is }: { is: (v: LibraryView) => boolean }) {
  return VIEWS.map(([v, label]) => (
    <SideLink key={v.kind} to={viewHref(v)} active={is(v)}>
      {label}
    </SideLink>
  ));
}

export default function Dashboard({ loaderData, actionData }: Route.ComponentProps) {
  const { user, initial, justPaid, folders, view, folderName, listing, look, page, paged, uploading, batches } =
    loaderData;
  // One live balance for the card and the upload button, pushed by the user's Durable Object.
  const live = useLiveCredits(initial);
  const credits = live.credits;
  const revalidator = useRevalidator();
  const title = viewTitle(view, folderName);
  const is = (v: LibraryView) => sameView(view, v);
  const [designerOpen, setDesignerOpen] = useState(false);
  const refreshLibrary = () => revalidator.revalidate();

  return (
    <div className="flex min-h-dvh flex-col bg-slate-50">
      <DashboardTopBar credits={credits} />
      {/* Phone first (docs/decisions/0133-phone-first-library.md): below lg the balance sits in the top bar,
          the actions and the folder drawer in a bar at the bottom (thumb reach), the photos come first and the
          account/folders card last. From lg up the layout is the desktop one, unchanged. */}
      <main
        id="main"
        className="container-page grid flex-1 gap-4 pt-3 pb-24 lg:grid-cols-[17rem_1fr] lg:gap-6 lg:pt-6 lg:pb-6"
      >
        <aside className="contents space-y-4 lg:block" aria-label="Library">
          {justPaid ? (
            <p className="alert-success" role="status">
              Thank you! Your payment went through. Your credits appear here as soon as Stripe confirms it.
            </p>
          ) : null}
          <div className="hidden lg:block">
            <PlanStatusCard {...live} />
          </div>
          <div className="card order-last space-y-4 p-4 lg:order-none" id="library-folders">
            <div>
              <p className="font-semibold" data-testid="user-name">
                {user.name}
              </p>
              <p className="truncate text-sm text-muted">{user.email}</p>
            </div>
            <nav aria-label="Photos" className="space-y-1">
              <ViewLinks is={is} />
            </nav>
            <div className="border-t border-line pt-4">
              <h2 className="px-3 text-xs font-semibold uppercase tracking-wide text-muted">Folders</h2>
              {/* An inline form stands in for the old name prompt: it works without JavaScript. */}
              {/* Keyed by the folder count so it closes and resets once a folder is made. */}
              <details key={folders.length} className="mt-2 px-3">
                <summary className="cursor-pointer text-sm font-semibold text-brand-600">Create Folder</summary>
                <Form method="post" className="mt-2 flex gap-2">
                  <input type="hidden" name="intent" value="create-folder" />
                  <label htmlFor="folder-name" className="sr-only">
                    Folder name
                  </label>
                  <input
                    id="folder-name"
                    name="name"
                    defaultValue={DEFAULT_FOLDER_NAME}
                    maxLength={100}
                    className="input min-h-9 py-1 text-sm"
                  />
                  <button type="submit" className="btn-primary min-h-9 px-3 py-1">
                    Create
                  </button>
                </Form>
              </details>
              <ul className="mt-2 space-y-1" data-testid="folder-list">
                {folders.map((f) => (
                  <li key={f.id} className="flex items-center gap-1">
                    <div className="min-w-0 flex-1">
                      <SideLink
                        to={viewHref({ kind: "folder", folderId: f.id })}
                        active={is({ kind: "folder", folderId: f.id })}
                      >
                        <span className="block truncate">{f.name}</span>
                        {f.team ? (
                          <span className="block truncate text-xs text-muted" data-testid="team-listing">
                            {f.team}'s listing
                          </span>
                        ) : null}
                      </SideLink>
                    </div>
                    {f.team ? null : (
                      // A team's listing is the team's: it has no Delete (ADR 0280).
                      <Form method="post">
                        <input type="hidden" name="intent" value="delete-folder" />
                        <input type="hidden" name="folderId" value={f.id} />
                        <button
                          type="submit"
                          className="btn-ghost min-h-9 px-2 py-1 text-xs text-danger"
                          aria-label={`Delete folder ${f.name}`}
                        >
                          Delete
                        </button>
                      </Form>
                    )}
                  </li>
                ))}
              </ul>
            </div>
          </div>
        </aside>

        <section aria-labelledby="view-title" className="min-w-0 space-y-4">
          <div className="flex flex-wrap items-center justify-between gap-3">
            <h1 id="view-title" className="text-xl font-bold tracking-tight lg:text-2xl">
              {title}
            </h1>
            {/* One set of actions: a bar fixed at the bottom on a phone, the header row's buttons on a desktop. */}
            <div
              className="fixed inset-x-0 bottom-0 z-30 flex items-center gap-2 border-t border-line bg-white/95 px-3 pt-2 pb-[max(0.5rem,env(safe-area-inset-bottom))] backdrop-blur lg:contents"
              data-testid="library-actions"
            >
              <details key={viewHref(view)} className="relative lg:hidden" data-testid="view-drawer">
                <summary className="btn-secondary cursor-pointer list-none px-3">
                  <span className="sr-only">Show: </span>
                  Folders
                </summary>
                <nav
                  aria-label="Photos and folders"
                  className="card absolute bottom-full left-0 mb-2 max-h-[60dvh] w-64 space-y-1 overflow-auto p-2"
                >
                  <ViewLinks is={is} />
                  {folders.map((f) => (
                    <SideLink
                      key={f.id}
                      to={viewHref({ kind: "folder", folderId: f.id })}
                      active={is({ kind: "folder", folderId: f.id })}
                    >
                      <span className="block truncate">{f.name}</span>
                    </SideLink>
                  ))}
                  <a href="#library-folders" className="block px-3 py-2 text-sm font-semibold text-brand-600">
                    Create or delete folders
                  </a>
                </nav>
              </details>
              {view.kind !== "trash" ? (
                <button type="button" className="btn-secondary px-3 lg:px-4" onClick={() => setDesignerOpen(true)}>
                  AI Designer
                </button>
              ) : null}
              {view.kind === "all" && credits > 0 ? (
                <Link
                  to={viewHref(view, { upload: "1" })}
                  className="btn-primary ml-auto px-3 lg:ml-0 lg:px-4"
                  preventScrollReset
                  data-testid="upload-action"
                >
                  Upload Photo<span className="hidden lg:inline"> ({credits} credits left)</span>
                </Link>
              ) : null}
              {view.kind === "trash" && page.photos.length > 0 ? (
                <Form
                  method="post"
                  onSubmit={(e) => {
                    if (!window.confirm("Delete every photo in the trash for good? This cannot be undone."))
                      e.preventDefault();
                  }}
                >
                  <button type="submit" name="intent" value="empty-trash" className="btn-danger">
                    Empty Trash
                  </button>
                </Form>
              ) : null}
            </div>
          </div>
          {batches.map((b) => (
            <p key={b.id} className={b.open ? "alert-info" : "alert-error"} role="status" data-testid="batch-banner">
              {b.open ? `Staging ${b.total} photos: ` : `Batch of ${b.total} photos: `}
              {b.counts.done} done
              {b.counts.failed > 0 ? `, ${b.counts.failed} failed (credits returned)` : ""}
              {b.open ? `, ${b.counts.queued + b.counts.processing} to go` : ""}.{" "}
              <Link to={`/batches/${b.id}`} className="font-semibold underline">
                {b.open ? "View progress" : "Retry the failed ones"}
              </Link>
            </p>
          ))}
          {view.kind === "folder" || view.kind === "all" ? (
            page.photos.length > 0 ? (
              <p className="text-sm">
                <Link
                  to={view.kind === "folder" ? `/batches/new?folder=${view.folderId}` : "/batches/new"}
                  className="font-semibold text-brand-600 hover:underline"
                  data-testid="stage-batch"
                >
                  Stage several photos at once →
                </Link>
              </p>
            ) : null
          ) : null}
          {view.kind === "folder" ? <ListingLookPanel folderId={view.folderId} look={look} /> : null}
          {view.kind === "folder" && listing ? <ListingPackPanel folderId={view.folderId} listing={listing} /> : null}

          {actionData ? <ActionMessage answer={actionData} /> : null}

          {uploading ? (
            <section aria-labelledby="upload-title" className="card space-y-3">
              <div className="flex items-center justify-between gap-3">
                <h2 id="upload-title" className="text-lg font-semibold">
                  Upload Photo
                </h2>
                <Link to={viewHref(view)} className="btn-ghost min-h-9 px-3 py-1" preventScrollReset>
                  Close
                </Link>
              </div>
              <UploadPanel owner={user.email} onUploaded={() => revalidator.revalidate()} />
            </section>
          ) : null}

          <PendingUploads owner={user.email} onUploaded={() => revalidator.revalidate()} />

          {paged ? (
            <p className="text-sm">
              <Link to={viewHref(view)} className="font-semibold text-brand-600 hover:underline">
                ← Back to the newest photos
              </Link>
            </p>
          ) : null}

          <PhotoGrid
            key={viewHref(view)}
            page={page}
            view={view}
            folders={folders}
            moreHref={(cursor) => viewHref(view, { cursor })}
            emptyText={emptyText(view)}
          />
          {designerOpen ? (
            <DesignerDialogOnDemand
              plan={live.plan?.name ?? null}
              onClose={() => setDesignerOpen(false)}
              onChanged={refreshLibrary}
            />
          ) : null}
        </section>
      </main>
    </div>
  );
}
