import { requireUser } from "@workers/http/auth";
import { readFormFields } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { batchPage, retryBatchFromForm } from "@workers/services/jobs/batch-pages";
import { useEffect } from "react";
import { data, Form, Link, useNavigation, useRevalidator } from "react-router";
import { DESIGN_STYLES, ROOM_TYPES } from "~/shared/catalog";
import { viewHref } from "~/shared/library-view";
import { type BatchItemStatus, creditsLabel } from "~/shared/listing";
import type { Route } from "./+types/batch";

// A batch's progress list: queued / processing / done / failed per photo, a
// thumbnail of each result as it lands, failures refunded one by one and
// offered for retry. It is server state: closing the tab or losing the network
// loses nothing, and the dashboard links back here.
// docs/decisions/0140-batches-variations-rerolls.md

/** While the batch runs, a page without JavaScript reloads itself; with JavaScript it asks every 2 s. */
const REFRESH_SECONDS = 5;
const POLL_MS = 2000;

// A signed-in page: the app's header with the balance, not the public one (app/root.tsx).
export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Staging progress · Stagewise" }];

/**
 * Without JavaScript the page reloads itself while the batch runs. Inside <noscript>, so a page with JavaScript
 * (which asks every 2 s instead) is never reloaded under the person's thumb.
 */
function RefreshWithoutJs() {
  // Fixed markup of ours, no input in it.
  return <noscript dangerouslySetInnerHTML={{ __html: `<meta http-equiv="refresh" content="${REFRESH_SECONDS}">` }} />;
}

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const page = await batchPage(getDeps(context).db, user.id, params.id.slice(0, 64));
  // A stranger's batch looks exactly like one that does not exist.
  if (!page) throw data(null, { status: 404 });
  return page;
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  if (raw.fields.intent !== "retry") return data({ ok: false, error: "Unknown action." }, { status: 400 });
  const res = await retryBatchFromForm(getDeps(context), user.id, params.id.slice(0, 64), raw.fields);
  if (!res.ok) return failureData(res);
  return { retried: res.retried };
}

const STATUS_TEXT: Record<BatchItemStatus, string> = {
  queued: "Queued",
  processing: "Processing…",
  done: "Done",
  failed: "Failed · credit returned",
};

const STATUS_CLASS: Record<BatchItemStatus, string> = {
  queued: "bg-slate-100 text-slate-700",
  processing: "bg-amber-100 text-amber-800",
  done: "bg-green-100 text-green-800",
  failed: "bg-red-100 text-red-800",
};

export default function BatchProgress({ loaderData, actionData }: Route.ComponentProps) {
  const { batch, submission, startedBy } = loaderData;
  const revalidator = useRevalidator();
  const nav = useNavigation();
  const { counts } = batch;
  const total = batch.items.length;
  const style = DESIGN_STYLES.find((s) => s.code === batch.designStyle)?.label ?? batch.designStyle;

  // Ask again while anything is queued or processing (and only while the tab is visible).
  useEffect(() => {
    if (!batch.open) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible" && revalidator.state === "idle") void revalidator.revalidate();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [batch.open, revalidator]);

  const back = batch.folderId ? viewHref({ kind: "folder", folderId: batch.folderId }) : viewHref({ kind: "all" });
  return (
    <div className="container-page max-w-3xl space-y-4 py-6">
      <p className="text-sm">
        <Link to={back} className="font-semibold text-brand-600 hover:underline">
          {startedBy && batch.folderId ? "← Back to the listing" : "← Back to your photos"}
        </Link>
      </p>
      <h1 className="text-2xl font-bold tracking-tight">
        Staging {total} {total === 1 ? "photo" : "photos"} · {style}
      </h1>
      {startedBy ? (
        <p className="text-sm text-muted" data-testid="batch-started-by">
          Started by {startedBy} in the team's listing.
        </p>
      ) : null}
      <p className="text-sm" role="status" data-testid="batch-counts">
        {counts.done} done · {counts.processing} processing · {counts.queued} queued · {counts.failed} failed
      </p>
      {batch.open ? <RefreshWithoutJs /> : null}
      {batch.open && !startedBy ? (
        <p className="text-sm text-muted">
          You can close this page: the photos keep staging and this list is on your dashboard when you come back.
        </p>
      ) : null}
      {actionData && "retried" in actionData ? (
        <p className="alert-success" role="status">
          Retrying {actionData.retried} {actionData.retried === 1 ? "photo" : "photos"}.
        </p>
      ) : null}
      {actionData && "error" in actionData ? (
        <p className="alert-error" role="alert">
          {actionData.error}
        </p>
      ) : null}
      {counts.failed > 0 && !batch.open && !startedBy ? (
        <Form method="post">
          <input type="hidden" name="intent" value="retry" />
          {/* The same retry sent twice (a lost answer, a second tap) starts it once: ADR 0140. */}
          <input type="hidden" name="submission" value={submission} />
          <button type="submit" className="btn-primary" disabled={nav.state !== "idle"} data-testid="batch-retry">
            Retry {counts.failed} failed · {creditsLabel(counts.failed)}
          </button>
        </Form>
      ) : null}
      <ul className="grid gap-2 sm:grid-cols-2" data-testid="batch-items">
        {batch.items.map((item) => (
          <li
            key={item.photoId}
            className="card flex items-center gap-3 p-2"
            data-testid="batch-item"
            data-status={item.status}
          >
            <img
              src={item.thumbUrl ?? `/api/photos/${item.photoId}/thumb`}
              alt={item.thumbUrl ? `Staged ${item.photoName}` : ""}
              loading="lazy"
              className="h-16 w-24 shrink-0 rounded object-cover"
            />
            <div className="min-w-0 flex-1 space-y-1 text-sm">
              <p className="truncate font-medium">{item.photoName}</p>
              <p className="text-xs text-muted">
                {ROOM_TYPES.find((r) => r.code === item.roomType)?.name ?? item.roomType}
                {item.attempts > 1 ? ` · attempt ${item.attempts}` : ""}
              </p>
              <span
                className={`inline-block rounded-full px-2 py-0.5 text-xs font-semibold ${STATUS_CLASS[item.status]}`}
              >
                {STATUS_TEXT[item.status]}
              </span>
              {item.status === "failed" && item.error ? <p className="text-xs text-danger">{item.error}</p> : null}
              {item.imageUrl ? (
                <a href={item.imageUrl} className="block text-xs font-semibold text-brand-600 hover:underline">
                  Open result
                </a>
              ) : null}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
