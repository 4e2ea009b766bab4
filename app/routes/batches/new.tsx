import { requireUser } from "@workers/http/auth";
import { readFormFields } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { batchForm, startBatchFromForm } from "@workers/services/jobs/batch-pages";
import { useState } from "react";
import { data, Form, Link, redirect, useNavigation } from "react-router";
import { BatchLookChoice } from "~/components/library/batch-look-choice";
import { DESIGN_STYLES, ROOM_TYPES, styleMenuLabel } from "~/shared/catalog";
import { viewHref } from "~/shared/library-view";
import { creditsLabel, pickField, roomField } from "~/shared/listing";
import type { Route } from "./+types/new";

// Stage a whole listing: pick the photos of a folder (or of the library), a
// room type each and one style for all, see the credit total, start them in
// one step. Each photo becomes its own job with its own credit; the progress
// list is /batches/:id. docs/decisions/0140-batches-variations-rerolls.md
// The listing's look is shown before starting: kept, made looser or stricter
// for this batch, or left out (docs/decisions/0190-one-look-for-a-listing.md).

// A signed-in page: the app's header with the balance, not the public one (app/root.tsx).
export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Stage photos · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const query = new URL(request.url).searchParams;
  const folderId = query.get("folder");
  const paidBy = query.get("paidBy");
  const deps = getDeps(context);
  const form = await batchForm(
    deps.db,
    user.id,
    folderId ? folderId.slice(0, 64) : null,
    paidBy ? paidBy.slice(0, 64) : null,
  );
  // Someone else's folder, or a team the user is not in, looks exactly like one that does not exist.
  if (!form) throw data(null, { status: 404 });
  // The balance as the session read it with the user's row.
  return { form, credits: user.credits };
}

export async function action({ request, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const res = await startBatchFromForm(getDeps(context), user.id, raw.fields);
  if (!res.ok) return failureData(res);
  if (!res.started) return { confirm: res.confirm };
  throw redirect(`/batches/${res.batchId}`);
}

const ROOMS = ROOM_TYPES.map((r) => ({ value: r.code, label: r.name }));
const STYLES = DESIGN_STYLES.map((d) => ({ value: d.code, label: styleMenuLabel(d) }));

export default function NewBatch({ loaderData, actionData }: Route.ComponentProps) {
  const { form } = loaderData;
  // What this batch is paid from: the team's pool (a team listing, or the library's team choice), else their own.
  const credits = form.payer ? form.payer.pool : loaderData.credits;
  const confirm = actionData && "confirm" in actionData ? actionData.confirm : null;
  // Without JavaScript the count below is the server's: after a confirm answer it shows the choices sent.
  const [picked, setPicked] = useState(() => new Set(confirm?.picked ?? form.candidates.map((c) => c.photo.id)));
  const nav = useNavigation();
  const count = picked.size;
  const error = actionData && "error" in actionData ? actionData.error : null;
  const back = form.folder ? viewHref({ kind: "folder", folderId: form.folder.id }) : viewHref({ kind: "all" });
  const toggle = (id: string, on: boolean) =>
    setPicked((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  return (
    <div className="container-page max-w-3xl space-y-4 py-6">
      <p className="text-sm">
        <Link to={back} className="font-semibold text-brand-600 hover:underline">
          ← Back to {form.folder ? form.folder.name : "All Photos"}
        </Link>
      </p>
      <h1 className="text-2xl font-bold tracking-tight">Stage photos{form.folder ? ` of ${form.folder.name}` : ""}</h1>
      <p className="text-sm text-muted">
        Each photo is staged on its own and costs 1 credit; a photo that fails gets its credit back. You can close this
        page: the progress list is kept and shown again on your dashboard.
      </p>
      {form.payers.length > 0 ? (
        // One payer per batch (docs/decisions/0318): the choice decides which photos are offered.
        <Form method="get" className="card flex flex-wrap items-end gap-2 p-3" data-testid="batch-payer">
          <div className="min-w-0 flex-1">
            <label htmlFor="batch-paid-by" className="label">
              Paid from
            </label>
            <select
              id="batch-paid-by"
              name="paidBy"
              className="input"
              defaultValue={form.payer?.teamId ?? "own"}
              onChange={(e) => e.currentTarget.form?.requestSubmit()}
            >
              {form.payers.map((p) => (
                <option key={p.value} value={p.value}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" className="btn-secondary">
            Show photos
          </button>
          <p className="w-full text-xs text-muted">
            {form.payer
              ? `Every photo of ${form.payer.name}'s listings, paid from its pool.`
              : "Your own photos outside team listings, paid from your own credits."}{" "}
            A batch is paid from one place.
          </p>
        </Form>
      ) : null}
      {form.candidates.length === 0 ? (
        <p className="card p-4 text-sm">No photos here yet. Upload photos first.</p>
      ) : (
        <Form method="post" className="space-y-4">
          {form.folder ? <input type="hidden" name="folderId" value={form.folder.id} /> : null}
          {form.payers.length > 0 ? <input type="hidden" name="paidBy" value={form.payer?.teamId ?? "own"} /> : null}
          {/* The total the person sees; the server starts exactly this many or asks again. */}
          <input type="hidden" name="quoted" value={count} />
          <input type="hidden" name="submission" value={form.submission} />
          <div>
            <label htmlFor="batch-style" className="label">
              Design style for every photo
            </label>
            <select
              id="batch-style"
              name="designStyle"
              className="input"
              defaultValue={confirm?.designStyle ?? form.designStyle}
              required
            >
              <option value="">Choose a style</option>
              {STYLES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </div>
          <BatchLookChoice look={form.look.view} photos={form.look.photos} chosen={confirm} />
          {form.truncated ? (
            <p className="text-sm text-muted">Showing the newest 100 photos: a batch takes at most 100.</p>
          ) : null}
          <ul className="grid gap-2 sm:grid-cols-2" data-testid="batch-candidates">
            {form.candidates.map(({ photo, roomType }) => (
              <li key={photo.id} className="card flex items-center gap-3 p-2">
                <input
                  type="checkbox"
                  name={pickField(photo.id)}
                  value="1"
                  defaultChecked={picked.has(photo.id)}
                  onChange={(e) => toggle(photo.id, e.target.checked)}
                  aria-label={`Stage ${photo.name}`}
                  className="h-5 w-5 shrink-0"
                />
                <img
                  src={photo.thumbUrl}
                  alt=""
                  width={photo.thumbWidth}
                  height={photo.thumbHeight}
                  loading="lazy"
                  className="h-14 w-20 shrink-0 rounded object-cover"
                />
                <div className="min-w-0 flex-1 space-y-1">
                  <p className="truncate text-sm font-medium">{photo.name}</p>
                  <select
                    name={roomField(photo.id)}
                    defaultValue={confirm?.rooms[photo.id] ?? roomType}
                    className="input min-h-9 py-1 text-sm"
                    aria-label={`Room type of ${photo.name}`}
                  >
                    <option value="">Room type…</option>
                    {ROOMS.map((r) => (
                      <option key={r.value} value={r.value}>
                        {r.label}
                      </option>
                    ))}
                  </select>
                </div>
              </li>
            ))}
          </ul>
          <div className="sticky bottom-0 space-y-2 border-t border-line bg-white/95 py-3 backdrop-blur">
            {error ? (
              <p className="alert-error" role="alert" data-testid="batch-error">
                {error}
              </p>
            ) : null}
            {confirm ? (
              <p className="alert-info" role="status" data-testid="batch-confirm">
                {confirm.message}
              </p>
            ) : null}
            <p className="text-sm" data-testid="batch-total">
              <strong>
                {count} {count === 1 ? "photo" : "photos"} · {creditsLabel(count)}
              </strong>{" "}
              <span className="text-muted">
                ·{" "}
                {form.payer
                  ? `the team's pool has ${creditsLabel(credits).replace(" (free)", "")}`
                  : `you have ${creditsLabel(credits).replace(" (free)", "")}`}
              </span>
            </p>
            {count > credits ? (
              <p className="text-sm text-danger">
                Not enough credits for {count} photos.{" "}
                {form.payer ? (
                  "Ask the team's owner to add credits."
                ) : (
                  <Link to="/plans" className="font-semibold underline">
                    Get more credits
                  </Link>
                )}
              </p>
            ) : null}
            <button
              type="submit"
              className="btn-primary w-full"
              disabled={count === 0 || nav.state !== "idle"}
              data-testid="batch-start"
            >
              {nav.state !== "idle" ? "Starting…" : `Start ${count} · ${creditsLabel(count)}`}
            </button>
          </div>
        </Form>
      )}
    </div>
  );
}
