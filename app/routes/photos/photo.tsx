import { requireUser } from "@workers/http/auth";
import { checkFields, readFormFields } from "@workers/http/body";
import { getDeps, requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { confirmStructure, returnChangedRoom } from "@workers/services/jobs/versions";
import { LIBRARY_NOT_UNDERSTOOD, libraryActionInput, runLibraryAction } from "@workers/services/library-actions";
import { photoView } from "@workers/services/photo-view";
import { photoAccess } from "@workers/services/teams/access";
import { data, redirect } from "react-router";
import { PhotoViewer } from "~/components/library/photo-viewer";
import { photoHref, viewFromSearch, viewHref } from "~/shared/library-view";
import { fail, NOT_FOUND } from "~/shared/result";
import { returnedMessage, STRUCTURE_CONFIRMED } from "~/shared/version-view";
import type { Route } from "./+types/photo";

// The photo view (docs/decisions/0187-photo-view.md): one photo of the library full size, at an address of its own
// within the library view it was opened from (?view=… or ?folder=…), its versions, and every action on it.
export const handle = { bareLayout: true };

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.photo.name ?? "Photo"} · Stagewise` },
];

/** The photo actions this page's forms send; the folder intents belong to the library page. */
const PHOTO_INTENTS = new Set(["move", "trash", "restore", "delete-forever"]);

export async function loader({ request, params, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const { db } = context.get(requestContext);
  const url = new URL(request.url);
  const view = viewFromSearch(url.searchParams);
  const found = await photoView(db, user.id, params.id, view);
  // Someone else's photo looks exactly like one that does not exist.
  if (!found) throw data(null, { status: 404 });
  const chosen = url.searchParams.get("v");
  const shownVersion = found.versions.find((v) => v.shown) ?? null;
  const version =
    chosen === "original" ? null : (found.versions.find((v) => v.id === chosen) ?? (chosen ? null : shownVersion));
  return {
    ...found,
    view,
    versionId: version?.id ?? null,
    compare: url.searchParams.get("compare") === "1",
    // "Show what changed" (ADR 0260): the structure check's change map over the before/after.
    changes: url.searchParams.get("changes") === "1",
    live: user.live,
  };
}

export async function action({ request, params, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const versionIntent = raw.fields.intent === "confirm-structure" || raw.fields.intent === "changed-room";
  // A result's intents act on the photo's versions: 404 unless the user may reach the photo now (ADR 0280), as the
  // photo's API routes answer; a member removed from a team no longer confirms or returns its listing's results.
  if (versionIntent && !(await photoAccess(getDeps(context).db, user.id, params.id))) return failureData(NOT_FOUND);
  // "I checked the walls and windows" on a flagged result of this photo (docs/decisions/0215-flag-when-unsure.md).
  if (raw.fields.intent === "confirm-structure") {
    const deps = getDeps(context);
    const res = await confirmStructure(deps.db, user.id, params.id, raw.fields.versionId ?? "", deps.clock());
    if (!res.ok) return failureData(res);
    return data({ ok: true as const, message: STRUCTURE_CONFIRMED });
  }
  // "This result changed the room": its credit back, once, within 7 days (docs/decisions/0261).
  if (raw.fields.intent === "changed-room") {
    const deps = getDeps(context);
    const keepPair = raw.fields.keepPair === "1";
    const res = await returnChangedRoom(deps, user.id, params.id, raw.fields.versionId ?? "", keepPair);
    if (!res.ok) return failureData(res);
    return data({ ok: true as const, message: returnedMessage(res.returnedTo) });
  }
  const parsed = checkFields(libraryActionInput, raw.fields);
  // Only this photo's intents, about the photo in the address: anything else is not understood and changes nothing.
  if (!parsed.ok || !PHOTO_INTENTS.has(parsed.data.intent)) return failureData(fail("invalid", LIBRARY_NOT_UNDERSTOOD));
  const input = parsed.data;
  if (!("photoId" in input) || input.photoId !== params.id) return failureData(fail("invalid", LIBRARY_NOT_UNDERSTOOD));
  const deps = getDeps(context);
  const view = viewFromSearch(new URL(request.url).searchParams);
  // Where to go once the photo leaves this view: the next photo of the view, or the one before, or the library.
  const before = input.intent === "move" ? null : await photoView(deps.db, user.id, params.id, view);
  const res = await runLibraryAction(deps, user.id, input);
  if (!res.ok) return failureData(res);
  if (input.intent !== "move") {
    const neighbour = before?.next ?? before?.previous ?? null;
    throw redirect(neighbour ? photoHref(neighbour, view) : viewHref(view));
  }
  return data({ ok: true as const, message: res.message });
}

export default function PhotoPage({ loaderData, actionData }: Route.ComponentProps) {
  return <PhotoViewer data={loaderData} actionData={actionData} />;
}
