import { useEffect, useRef, useState } from "react";
import { Link, useLocation, useNavigate, useRevalidator } from "react-router";
import { PhotoActions, type PhotoDialog } from "~/components/library/photo-actions";
import { QuickDialogOnDemand, SkyDialogOnDemand } from "~/components/staging/dialogs-on-demand";
import { JobError, JobFlagged, JobProgress } from "~/components/staging/job-status";
import { ResultCompare } from "~/components/staging/result-compare";
import { versionLabel } from "~/components/staging/versions-list";
import { api } from "~/lib/api";
import { startJob, useJob } from "~/lib/use-job";
import { type LiveCredits, useLiveCredits } from "~/lib/use-live-credits";
import { type LibraryView, photoHref, viewHref } from "~/shared/library-view";
import type { VersionView } from "~/shared/version-view";

// The photo view's screen (docs/decisions/0187-photo-view.md): the version shown large over its thumbnail (which is
// already in the browser's cache from the grid, so something is on screen at once), a before/after slider against
// the original, the versions as a strip, and every action. Left and right arrows and a swipe go to the previous and
// next photo of the same library view, replacing the address (so Back closes the view); Escape closes it.

export interface ViewerData {
  photo: {
    id: string;
    name: string;
    folderId: string | null;
    trashed: boolean;
    thumbUrl: string;
    originalUrl: string;
    downloadUrl: string;
  };
  versions: VersionView[];
  folders: { id: string; name: string }[];
  previous: string | null;
  next: string | null;
  view: LibraryView;
  versionId: string | null;
  compare: boolean;
  /** "Show what changed": the structure check's change map over the before/after (ADR 0260). */
  changes: boolean;
  live: LiveCredits;
}

/** Keys typed into a field, a select or the compare slider's handle are theirs, not the view's. */
function ownedByControl(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el?.closest?.("input, select, textarea, [role=slider], dialog[open]");
}

const SIDE = "absolute top-1/2 z-10 flex h-14 w-11 -translate-y-1/2 items-center justify-center rounded-full";

export function PhotoViewer({ data, actionData }: { data: ViewerData; actionData?: unknown }) {
  const { photo, versions, view, previous, next, versionId, compare, folders } = data;
  const changes = compare && data.changes;
  const navigate = useNavigate();
  const location = useLocation();
  const revalidator = useRevalidator();
  const [dialog, setDialog] = useState<PhotoDialog | null>(null);
  // The live balance and plan, as the library's: the plan decides which of the dialog's options are open.
  const live = useLiveCredits(data.live);
  const credits = live.credits;
  const job = useJob(() => revalidator.revalidate());
  const version = versions.find((v) => v.id === versionId) ?? null;
  const processed = versions.some((v) => v.shown);
  const prevHref = previous ? photoHref(previous, view) : null;
  const nextHref = next ? photoHref(next, view) : null;
  const closeHref = viewHref(view);
  const fromLibrary = (location.state as { fromLibrary?: boolean } | null)?.fromLibrary === true;

  const keys = useRef({ prevHref, nextHref, closeHref, fromLibrary });
  keys.current = { prevHref, nextHref, closeHref, fromLibrary };
  useEffect(() => {
    const go = (href: string | null) => {
      if (href) navigate(href, { replace: true, state: location.state, preventScrollReset: true });
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || ownedByControl(e.target)) return;
      if (document.querySelector("dialog[open]")) return;
      const k = keys.current;
      if (e.key === "ArrowLeft") go(k.prevHref);
      else if (e.key === "ArrowRight") go(k.nextHref);
      else if (e.key === "Escape") {
        const sheet = document.querySelector<HTMLDetailsElement>("[data-testid=more-actions][open]");
        if (sheet) sheet.open = false;
        else if (k.fromLibrary) navigate(-1);
        else navigate(k.closeHref);
      } else return;
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [navigate, location.state]);

  // A horizontal swipe over the photo: right to left shows the next photo.
  const touch = useRef<{ x: number; y: number } | null>(null);
  const onTouchStart = (e: React.TouchEvent) => {
    const t = e.touches[0];
    touch.current = t && e.touches.length === 1 ? { x: t.clientX, y: t.clientY } : null;
  };
  const onTouchEnd = (e: React.TouchEvent) => {
    const start = touch.current;
    const t = e.changedTouches[0];
    touch.current = null;
    if (!start || !t || (e.target as HTMLElement).closest("[role=slider]")) return;
    const dx = t.clientX - start.x;
    if (Math.abs(dx) < 50 || Math.abs(dx) < Math.abs(t.clientY - start.y) * 1.5) return;
    const href = dx < 0 ? nextHref : prevHref;
    if (href) navigate(href, { replace: true, state: location.state, preventScrollReset: true });
  };

  async function choose(v: VersionView) {
    const answer = await api.choose(photo.id, v.id);
    if (!answer?.ok) return job.setError("Could not change the shown version. Try again.");
    revalidator.revalidate();
  }
  const actionProps = {
    photo,
    version,
    view,
    folders,
    compare,
    changes,
    // A dialog opened from the phone's "More" sheet closes the sheet: it must not stay open under the dialog.
    onOpen: (d: PhotoDialog) => {
      const sheet = document.querySelector<HTMLDetailsElement>("[data-testid=more-actions][open]");
      if (sheet) sheet.open = false;
      setDialog(d);
    },
    onReroll: (v: VersionView, acceptCharge: boolean) =>
      void job.track(() => startJob({ rerollOf: v.jobId, body: { acceptCharge } })),
    onChoose: (v: VersionView) => void choose(v),
  };
  const large = version ? version.imageUrl : photo.originalUrl;
  // The thumbnail under the large image: the shown version's (from the grid) or the original's.
  const small = version ? version.thumbUrl : processed ? `${photo.thumbUrl}&variant=original` : photo.thumbUrl;
  const message =
    actionData && typeof actionData === "object" && ("message" in actionData || "error" in actionData)
      ? (actionData as { ok: boolean; message?: string; error?: string })
      : null;

  return (
    <div className="flex h-dvh flex-col bg-slate-950 text-white" data-testid="photo-view" data-photo-id={photo.id}>
      <header className="flex h-12 shrink-0 items-center gap-2 px-2 lg:h-14 lg:px-4">
        <Link
          to={closeHref}
          className="btn-ghost min-h-11 px-3 text-white hover:bg-white/10"
          onClick={(e) => {
            if (!fromLibrary) return;
            e.preventDefault();
            navigate(-1);
          }}
          data-testid="photo-close"
        >
          ← Library
        </Link>
        <h1 className="min-w-0 flex-1 truncate text-sm font-semibold lg:text-base" data-testid="photo-view-name">
          {photo.name}
        </h1>
        <p className="hidden shrink-0 text-xs text-slate-300 sm:block">
          {version ? versionLabel(version) : "Original"}
        </p>
        <Link
          to="/plans"
          className="shrink-0 whitespace-nowrap rounded-full bg-white/10 px-3 py-1.5 text-xs font-semibold"
          aria-label={`${credits} ${credits === 1 ? "credit" : "credits"} left. Plans`}
        >
          <span data-testid="credits">{credits}</span> {credits === 1 ? "credit" : "credits"}
        </Link>
      </header>
      <div className="flex min-h-0 flex-1 flex-col lg:flex-row">
        <main id="main" className="flex min-h-0 flex-1 flex-col">
          <div
            className="relative min-h-0 flex-1 touch-pan-y"
            onTouchStart={onTouchStart}
            onTouchEnd={onTouchEnd}
            data-testid="photo-stage"
          >
            {compare && version ? (
              <div className="mx-auto flex h-full max-w-[calc((100dvh-12rem)*4/3)] items-center px-2">
                <div className="w-full">
                  <ResultCompare
                    before={photo.originalUrl}
                    after={large}
                    afterLabel={versionLabel(version)}
                    changes={changes ? version.structure?.changesUrl : null}
                  />
                </div>
              </div>
            ) : (
              <>
                <img src={small} alt="" aria-hidden="true" className="absolute inset-0 h-full w-full object-contain" />
                <img
                  key={large}
                  src={large}
                  alt={version ? `${photo.name}: ${versionLabel(version)}` : `${photo.name}: original`}
                  decoding="async"
                  fetchPriority="high"
                  className="absolute inset-0 h-full w-full object-contain"
                  data-testid="photo-large"
                />
              </>
            )}
            {version?.structure?.message ? (
              // A flagged result says what to check and where, over the photo (docs/decisions/0215).
              <p
                className="absolute inset-x-2 top-2 z-10 rounded-lg bg-amber-100/95 px-3 py-2 text-sm text-amber-950 shadow"
                role="note"
                data-testid="structure-flagged"
              >
                {version.structure.message}
                {version.structure.confirmedAt ? " You confirmed you checked it." : ""}
              </p>
            ) : null}
            <StepLink to={prevHref} side="left-2" label="Previous photo" testId="photo-previous" glyph="‹" />
            <StepLink to={nextHref} side="right-2" label="Next photo" testId="photo-next" glyph="›" />
          </div>
          <nav aria-label="Versions" className="shrink-0 px-2 py-2">
            <ul className="flex gap-2 overflow-x-auto" data-testid="version-strip">
              {[null, ...versions].map((v) => {
                const current = (v?.id ?? null) === versionId;
                return (
                  <li key={v?.id ?? "original"} className="shrink-0">
                    <Link
                      to={photoHref(photo.id, view, { v: v?.id ?? "original", ...(compare ? { compare: "1" } : {}) })}
                      replace
                      state={location.state}
                      preventScrollReset
                      aria-current={current ? "true" : undefined}
                      className={`block w-20 rounded-lg border-2 p-0.5 text-[11px] leading-tight ${current ? "border-white" : "border-transparent opacity-80 hover:opacity-100"}`}
                    >
                      <img
                        src={v ? v.thumbUrl : `${photo.thumbUrl}&variant=original`}
                        alt=""
                        loading="lazy"
                        className="aspect-[4/3] w-full rounded object-cover"
                      />
                      <span className="block truncate">{v ? versionLabel(v) : "Original"}</span>
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
        </main>
        <aside
          aria-label="Photo actions"
          className="hidden w-80 shrink-0 overflow-y-auto bg-white p-4 text-ink lg:block"
          data-testid="photo-actions-desktop"
        >
          <Status job={job} message={message} />
          <PhotoActions {...actionProps} idPrefix="desk" />
        </aside>
      </div>
      {/* A phone: the first actions under the thumb, the rest one tap away behind More. */}
      <nav
        aria-label="Photo actions"
        className="relative grid shrink-0 grid-cols-4 gap-1 bg-white px-2 pt-2 pb-[max(0.5rem,env(safe-area-inset-bottom))] text-ink lg:hidden"
        data-testid="photo-actions-phone"
      >
        {photo.trashed ? null : (
          <>
            <button type="button" className="btn-secondary min-h-11 px-1 text-xs" onClick={() => setDialog("add")}>
              Stage
            </button>
            <button type="button" className="btn-secondary min-h-11 px-1 text-xs" onClick={() => setDialog("remove")}>
              Remove furniture
            </button>
            <a
              href={version ? version.downloadUrl : `${photo.downloadUrl}?variant=original`}
              download
              className="btn-secondary min-h-11 px-1 text-xs"
            >
              Download
            </a>
          </>
        )}
        <details className={photo.trashed ? "col-span-4" : ""} data-testid="more-actions">
          <summary className="btn-primary min-h-11 w-full cursor-pointer list-none px-1 text-xs">More</summary>
          <div className="absolute inset-x-0 bottom-full max-h-[70dvh] overflow-y-auto rounded-t-2xl bg-white p-4 shadow-2xl">
            <Status job={job} message={message} />
            <PhotoActions {...actionProps} idPrefix="phone" />
          </div>
        </details>
      </nav>
      {dialog === "add" || dialog === "remove" || dialog === "paint" || dialog === "editor" ? (
        <QuickDialogOnDemand
          photoId={photo.id}
          photoName={photo.name}
          plan={live.plan?.name ?? null}
          initialAction={dialog === "editor" ? "" : dialog}
          onClose={() => setDialog(null)}
          onChanged={() => revalidator.revalidate()}
        />
      ) : null}
      {dialog === "sky" ? (
        <SkyDialogOnDemand
          photoId={photo.id}
          photoName={photo.name}
          sourceVersionId={version?.id ?? "original"}
          onClose={() => setDialog(null)}
          onChanged={() => revalidator.revalidate()}
        />
      ) : null}
    </div>
  );
}

function Status({
  job,
  message,
}: {
  job: { busy: boolean; elapsed: number; error: string | null; version: VersionView | null };
  message: { ok: boolean; message?: string; error?: string } | null;
}) {
  return (
    <div className="mb-3 space-y-2 empty:hidden">
      {/* A job that just ended with a flagged result: what to check, said where the job's progress was. */}
      <JobFlagged version={job.busy ? null : job.version} />
      {message ? (
        <p className={message.ok ? "alert-success" : "alert-error"} role={message.ok ? "status" : "alert"}>
          {message.message ?? message.error}
        </p>
      ) : null}
      {job.busy ? <JobProgress elapsed={job.elapsed} /> : null}
      <JobError message={job.error} />
    </div>
  );
}

/** The previous or next photo of the same library view, over the photo: replaces the address so Back closes the view. */
function StepLink(p: { to: string | null; side: string; label: string; testId: string; glyph: string }) {
  const location = useLocation();
  if (!p.to) return null;
  return (
    <Link
      to={p.to}
      replace
      state={location.state}
      className={`${SIDE} ${p.side} bg-black/50 hover:bg-black/70`}
      aria-label={p.label}
      data-testid={p.testId}
    >
      {p.glyph}
    </Link>
  );
}
