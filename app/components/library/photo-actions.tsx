import { Form, Link } from "react-router";
import { OriginalLinkControls } from "~/components/staging/original-link";
import { RerollControl } from "~/components/staging/versions-list";
import { type LibraryView, photoHref } from "~/shared/library-view";
import {
  CONFIRM_CHECKED,
  FLAGGED_NOT_CONFIRMED,
  mlsRefusal,
  RETURN_WINDOW_DAYS,
  RETURNED_NOT_FOR_MLS,
  returnable,
  type VersionView,
} from "~/shared/version-view";

// Every action on one photo, in one list (docs/decisions/0187-photo-view.md): the AI actions open the library's
// existing dialogs (their server side is the same job API), the rest are links and forms that work before the page's
// JavaScript has loaded. The photo view shows it beside the photo on a desktop and behind "More" on a phone.

export type PhotoDialog = "add" | "remove" | "paint" | "sky" | "editor";

export interface ActionsPhoto {
  id: string;
  name: string;
  folderId: string | null;
  trashed: boolean;
  downloadUrl: string;
}

const ROW = "btn-secondary w-full justify-start";

export function PhotoActions({
  photo,
  version,
  view,
  folders,
  compare,
  changes = false,
  idPrefix,
  onOpen,
  onReroll,
  onChoose,
}: {
  photo: ActionsPhoto;
  /** The version shown large; null for the original. */
  version: VersionView | null;
  view: LibraryView;
  folders: { id: string; name: string }[];
  compare: boolean;
  /** The structure check's change map is laid over the before/after ("Show what changed", ADR 0260). */
  changes?: boolean;
  /** Keeps the form fields' ids apart when the list is on the page twice (phone sheet, desktop column). */
  idPrefix: string;
  onOpen: (dialog: PhotoDialog) => void;
  onReroll: (v: VersionView, acceptCharge: boolean) => void;
  onChoose: (v: VersionView) => void;
}) {
  const verdict = version?.structure?.verdict;
  // The exports' own rule (mlsRefusal): returned, refused or kept never; flagged once its owner confirmed checking it.
  const refusal = version
    ? mlsRefusal({ verdict, confirmedAt: version.structure?.confirmedAt, returnedAt: version.returnedAt })
    : null;
  const listable = version !== null && refusal === null;
  const toConfirm = version !== null && refusal === FLAGGED_NOT_CONFIRMED;
  const vParam = version ? version.id : "original";
  if (photo.trashed) {
    return (
      <div className="space-y-2" data-testid="photo-actions-list">
        <Form method="post">
          <input type="hidden" name="photoId" value={photo.id} />
          <button type="submit" name="intent" value="restore" className={ROW}>
            Restore
          </button>
        </Form>
        <Form
          method="post"
          onSubmit={(e) => {
            if (!window.confirm(`Delete "${photo.name}" for good? This cannot be undone.`)) e.preventDefault();
          }}
        >
          <input type="hidden" name="photoId" value={photo.id} />
          <button type="submit" name="intent" value="delete-forever" className="btn-danger w-full">
            Delete forever
          </button>
        </Form>
      </div>
    );
  }
  return (
    <div className="space-y-2" data-testid="photo-actions-list">
      <button type="button" className={ROW} onClick={() => onOpen("add")} data-action="stage">
        Stage
      </button>
      <button type="button" className={ROW} onClick={() => onOpen("remove")} data-action="remove">
        Remove furniture
      </button>
      <button type="button" className={ROW} onClick={() => onOpen("paint")} data-action="paint">
        Remove just what I paint
      </button>
      <button type="button" className={ROW} onClick={() => onOpen("sky")} data-action="sky">
        Sky
      </button>
      <button type="button" className={ROW} onClick={() => onOpen("editor")} data-action="editor">
        Versions and AI options
      </button>
      {version?.kind === "stage" && verdict !== "refused" ? (
        <div className="flex flex-wrap items-center gap-1 text-sm" data-action="reroll">
          <RerollControl version={version} onReroll={(accept) => onReroll(version, accept)} />
        </div>
      ) : null}
      {version ? (
        <Link
          to={photoHref(photo.id, view, compare ? { v: vParam } : { v: vParam, compare: "1" })}
          replace
          preventScrollReset
          className={ROW}
          data-action="compare"
        >
          {compare ? "Hide the original" : "Compare with the original"}
        </Link>
      ) : null}
      {version?.structure?.changesUrl ? (
        // The check's change map over the before/after: a link, so the server draws it before any script runs.
        <Link
          to={photoHref(
            photo.id,
            view,
            changes ? { v: vParam, compare: "1" } : { v: vParam, compare: "1", changes: "1" },
          )}
          replace
          preventScrollReset
          className={ROW}
          data-action="show-changes"
        >
          {changes ? "Hide what changed" : "Show what changed"}
        </Link>
      ) : null}
      {version && !version.shown && verdict !== "refused" ? (
        <button type="button" className={ROW} onClick={() => onChoose(version)} data-action="choose">
          Show this version in the library
        </button>
      ) : null}
      {verdict === "refused" ? (
        <p className="text-sm text-amber-900">
          Changed the room's walls, windows or doors: not charged, not for a listing. Keep it from the photo's editor
          (Stage) for a credit.
        </p>
      ) : (
        <a
          href={version ? version.downloadUrl : `${photo.downloadUrl}?variant=original`}
          download
          className={ROW}
          data-action="download"
        >
          Download
        </a>
      )}
      {toConfirm ? (
        // Download for MLS asks first: a flagged result goes into a listing once its owner says they checked it.
        <Form
          method="post"
          className="space-y-1 rounded border border-amber-300 bg-amber-50 p-2"
          data-action="confirm-structure"
        >
          <input type="hidden" name="intent" value="confirm-structure" />
          <input type="hidden" name="versionId" value={version.id} />
          <p className="text-sm text-amber-950" data-testid="mls-needs-confirmation">
            Download for MLS: first compare this result with the original.
          </p>
          <button type="submit" className="btn-primary w-full" data-testid="confirm-structure">
            {CONFIRM_CHECKED}
          </button>
        </Form>
      ) : null}
      {listable ? (
        <a
          href={`/api/photos/${photo.id}/versions/${version.id}/labelled`}
          download
          className={ROW}
          data-action="download-mls"
        >
          Download for MLS
        </a>
      ) : null}
      {listable ? (
        <div data-action="original-page">
          <OriginalLinkControls photoId={photo.id} versionId={version.id} />
        </div>
      ) : null}
      {version && returnable(version, Date.now()) ? (
        // The check passed or marked a result that did change the room: its credit back (docs/decisions/0261).
        <Form method="post" className="space-y-1 rounded border border-slate-200 p-2" data-action="changed-room">
          <input type="hidden" name="intent" value="changed-room" />
          <input type="hidden" name="versionId" value={version.id} />
          <label className="flex items-start gap-2 text-sm">
            <input type="checkbox" name="keepPair" value="1" className="mt-1" data-testid="keep-pair" />
            <span>Keep this photo and result privately to improve the check</span>
          </label>
          <button type="submit" className="btn-secondary w-full" data-testid="changed-room">
            This result changed the room
          </button>
          <p className="text-xs text-muted">
            Returns its credit (to the team's pool for a photo in a team listing), within {RETURN_WINDOW_DAYS} days of
            the result.
          </p>
        </Form>
      ) : version?.returnedAt ? (
        // Returned: its own copy stays downloadable above; Download for MLS and the original page are not offered.
        <p className="text-sm text-muted" data-testid="returned">
          Credit returned. <span data-testid="returned-not-for-mls">{RETURNED_NOT_FOR_MLS}</span>
        </p>
      ) : null}
      <Form method="post" className="flex items-center gap-2" data-action="move">
        <input type="hidden" name="intent" value="move" />
        <input type="hidden" name="photoId" value={photo.id} />
        <label className="sr-only" htmlFor={`${idPrefix}-move`}>
          Move {photo.name} to
        </label>
        <select
          id={`${idPrefix}-move`}
          name="folderId"
          defaultValue={photo.folderId ?? ""}
          key={photo.folderId ?? ""}
          className="input min-h-11 flex-1 text-sm"
        >
          <option value="">Unassigned</option>
          {folders.map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </select>
        <button type="submit" className="btn-secondary">
          Move
        </button>
      </Form>
      <Form method="post" data-action="delete">
        <input type="hidden" name="photoId" value={photo.id} />
        <button type="submit" name="intent" value="trash" className="btn-danger w-full">
          Delete
        </button>
      </Form>
    </div>
  );
}
