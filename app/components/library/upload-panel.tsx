import { useEffect, useId, useRef, useState, useSyncExternalStore } from "react";
import { useRouteLoaderData } from "react-router";
import { Icon } from "~/components/icons";
// Type-only at the top: the downscaler and the upload queue load on first use (an upload chosen or a kept
// one found), keeping them out of /dashboard's first JavaScript.
import type { QueuedUpload, UploadedPhoto } from "~/lib/upload-queue";
import type { UploadSnapshot, UploadTask } from "~/lib/upload-task";
import { checkChosenFile, UPLOAD_HINT, UPLOAD_MESSAGES } from "~/shared/upload-rules";

export type { UploadedPhoto };

type Phase =
  | { kind: "idle"; message: string | null }
  | { kind: "preparing"; fileName: string }
  | { kind: "task"; upload: QueuedUpload };

const NO_TASK: UploadSnapshot<UploadedPhoto> = {
  state: "running",
  sentBytes: 0,
  totalBytes: 0,
  retrying: false,
  waitingForNetwork: false,
  error: null,
  final: false,
  photo: null,
};

function useTaskSnapshot(task: UploadTask<UploadedPhoto> | null): UploadSnapshot<UploadedPhoto> {
  return useSyncExternalStore(
    (onChange) => task?.subscribe(onChange) ?? (() => undefined),
    () => task?.snapshot() ?? NO_TASK,
    () => NO_TASK,
  );
}

function formatMb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const STATE_TEXT: Record<UploadSnapshot["state"], string> = {
  running: "Uploading…",
  pausing: "Pausing…",
  paused: "Paused",
  canceling: "Canceling…",
  canceled: "Upload canceled.",
  success: "Uploaded.",
  error: "Upload stopped.",
};

/** Whose uploads the browser keeps: the signed-in account on /dashboard. */
function useOwner(owner: string | undefined): string | null {
  const data = useRouteLoaderData("routes/dashboard/dashboard") as { user?: { email?: string } } | undefined;
  return owner ?? data?.user?.email ?? null;
}

/** Calls `onUploaded` once when the task's photo is stored. */
function useReportSuccess(snap: UploadSnapshot<UploadedPhoto>, onUploaded?: (photo: UploadedPhoto) => void) {
  const reported = useRef<string | null>(null);
  const onUploadedRef = useRef(onUploaded);
  onUploadedRef.current = onUploaded;
  useEffect(() => {
    if (snap.state === "success" && snap.photo && reported.current !== snap.photo.id) {
      reported.current = snap.photo.id;
      onUploadedRef.current?.(snap.photo);
    }
  }, [snap]);
}

/** One upload's name, progress bar, state and Pause / Resume / Try again / Cancel. */
function UploadProgress({ task, snap }: { task: UploadTask<UploadedPhoto>; snap: UploadSnapshot<UploadedPhoto> }) {
  const percent = snap.totalBytes > 0 ? Math.floor((snap.sentBytes / snap.totalBytes) * 100) : 0;
  const status = snap.waitingForNetwork
    ? UPLOAD_MESSAGES.offline
    : snap.retrying
      ? UPLOAD_MESSAGES.network
      : STATE_TEXT[snap.state];
  return (
    <div className="space-y-3">
      <div className="flex items-baseline justify-between gap-3 text-sm">
        <span className="truncate font-medium">{task.source.name}</span>
        <span className="shrink-0 text-muted" data-testid="upload-progress-text">
          {formatMb(snap.sentBytes)} of {formatMb(snap.totalBytes)} · {percent}%
        </span>
      </div>
      <div
        role="progressbar"
        aria-label={`Upload progress of ${task.source.name}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        className="h-3 overflow-hidden rounded-full bg-slate-100"
      >
        <div
          className={`h-3 rounded-full transition-[width] ${snap.state === "error" ? "bg-danger" : snap.waitingForNetwork ? "bg-slate-400" : "bg-brand-600"}`}
          style={{ width: `${percent}%` }}
        />
      </div>
      <p role="status" className="text-sm" data-testid="upload-status" data-offline={snap.waitingForNetwork}>
        {status}
      </p>
      {snap.state === "error" && snap.error ? (
        <p className="alert-error" role="alert" data-testid="upload-message">
          {snap.error}
        </p>
      ) : null}
      <div className="flex flex-wrap gap-2">
        {snap.state === "running" ? (
          <button type="button" className="btn-secondary" onClick={() => task.pause()}>
            Pause
          </button>
        ) : null}
        {snap.state === "paused" || snap.state === "pausing" ? (
          <button type="button" className="btn-primary" onClick={() => task.resume()}>
            Resume
          </button>
        ) : null}
        {snap.state === "error" && task.uploadId ? (
          <button type="button" className="btn-primary" onClick={() => task.retry()}>
            Try again
          </button>
        ) : null}
        {snap.state === "running" || snap.state === "pausing" || snap.state === "paused" ? (
          <button type="button" className="btn-ghost text-danger" onClick={() => task.cancel()}>
            Cancel
          </button>
        ) : null}
      </div>
    </div>
  );
}

function PendingRow({ upload, onUploaded }: { upload: QueuedUpload; onUploaded?: (photo: UploadedPhoto) => void }) {
  const snap = useTaskSnapshot(upload.task);
  useReportSuccess(snap, onUploaded);
  if (snap.state === "success" || snap.state === "canceled") return null;
  return (
    <li data-testid="pending-upload" data-state={snap.state} className="card p-4">
      <UploadProgress task={upload.task} snap={snap} />
    </li>
  );
}

/**
 * Uploads a reload, a crash or a discarded tab interrupted: kept in the
 * browser (docs/decisions/0130-uploads-survive-the-tab.md), shown here and
 * resumed from the last chunk the server confirmed.
 */
export function PendingUploads({ owner, onUploaded }: { owner?: string; onUploaded?: (photo: UploadedPhoto) => void }) {
  const who = useOwner(owner);
  const [pending, setPending] = useState<QueuedUpload[]>([]);
  useEffect(() => {
    if (!who) return;
    let stale = false;
    // Only the small store is read on every visit; the queue (and the upload code) loads when something is pending.
    void import("~/lib/upload-store")
      .then(({ pendingUploads }) => pendingUploads(who))
      .then((records) =>
        records.length === 0 ? [] : import("~/lib/upload-queue").then(({ resumePending }) => resumePending(who)),
      )
      .then((list) => {
        if (!stale) setPending(list);
      });
    return () => {
      stale = true;
    };
  }, [who]);
  if (pending.length === 0) return null;
  return (
    <section aria-labelledby="pending-title" data-testid="pending-uploads" className="space-y-2">
      <h2 id="pending-title" className="text-sm font-semibold text-muted">
        Uploads carried on from before
      </h2>
      <ul className="space-y-2">
        {pending.map((u) => (
          <PendingRow key={u.key} upload={u} onUploaded={onUploaded} />
        ))}
      </ul>
    </section>
  );
}

/**
 * Drop or choose a photo; it is checked, downscaled and sent in resumable
 * chunks with a progress bar and Pause, Resume and Cancel. Uploading needs
 * JavaScript (the photo is prepared in the browser); without it the panel says so.
 */
export function UploadPanel({
  onUploaded,
  owner,
}: {
  onUploaded?: (photo: UploadedPhoto) => void;
  /** Whose uploads the browser keeps for a resume; defaults to the signed-in account on /dashboard. */
  owner?: string;
}) {
  const inputId = useId();
  const hintId = useId();
  const who = useOwner(owner);
  const [phase, setPhase] = useState<Phase>({ kind: "idle", message: null });
  const [dragging, setDragging] = useState(false);
  const upload = phase.kind === "task" ? phase.upload : null;
  const task = upload?.task ?? null;
  const snap = useTaskSnapshot(task);
  useReportSuccess(snap, onUploaded);

  // Leaving the page would lose an upload the browser could not keep (or one still being prepared): ask first.
  const busy =
    phase.kind === "preparing" ||
    (upload !== null && !upload.kept && ["running", "pausing", "paused"].includes(snap.state));
  useEffect(() => {
    if (!busy) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [busy]);

  async function choose(file: File | undefined) {
    if (!file) return;
    const problem = checkChosenFile(file);
    if (problem) {
      setPhase({ kind: "idle", message: problem });
      return;
    }
    setPhase({ kind: "preparing", fileName: file.name });
    let PrepareErrorClass: typeof import("~/lib/image-prep").PrepareError | null = null;
    try {
      const [{ PrepareError, preparePhoto }, { startUpload }] = await Promise.all([
        import("~/lib/image-prep"),
        import("~/lib/upload-queue"),
      ]);
      PrepareErrorClass = PrepareError;
      const prepared = await preparePhoto(file);
      // Kept in the browser (when it lets us) before the first byte leaves, so a reload resumes it.
      const next = await startUpload(who, prepared, file.name);
      setPhase({ kind: "task", upload: next });
    } catch (err) {
      setPhase({
        kind: "idle",
        message: PrepareErrorClass && err instanceof PrepareErrorClass ? err.message : UPLOAD_MESSAGES.unreadable,
      });
    }
  }

  const showDropzone = phase.kind === "idle" || (task && ["success", "canceled", "error"].includes(snap.state));

  return (
    <div data-testid="upload-panel" data-state={phase.kind === "task" ? snap.state : phase.kind} className="space-y-4">
      <noscript>
        <p className="alert-error">Uploading a photo needs JavaScript: the photo is resized in your browser first.</p>
      </noscript>
      {showDropzone ? (
        <label
          htmlFor={inputId}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            void choose(e.dataTransfer.files[0]);
          }}
          className={`flex min-h-40 cursor-pointer flex-col items-center justify-center gap-2 rounded-2xl border-2 border-dashed p-6 text-center focus-within:outline-3 focus-within:outline-brand-500 ${
            dragging ? "border-brand-500 bg-brand-50" : "border-slate-300 hover:border-brand-300 hover:bg-slate-50"
          }`}
        >
          <Icon name="upload" className="h-8 w-8 text-brand-600" />
          <span className="font-semibold">Choose a photo</span>
          <span id={hintId} className="text-sm text-muted">
            {UPLOAD_HINT}
          </span>
          <input
            id={inputId}
            type="file"
            accept="image/jpeg,image/png,.jpg,.jpeg,.png"
            className="sr-only"
            aria-describedby={hintId}
            data-testid="upload-input"
            onChange={(e) => {
              void choose(e.currentTarget.files?.[0]);
              e.currentTarget.value = "";
            }}
          />
        </label>
      ) : null}

      {phase.kind === "idle" && phase.message ? (
        <p className="alert-error" role="alert" data-testid="upload-message">
          {phase.message}
        </p>
      ) : null}

      {phase.kind === "preparing" ? (
        <p className="text-sm text-muted" role="status">
          Preparing {phase.fileName}…
        </p>
      ) : null}

      {task ? <UploadProgress task={task} snap={snap} /> : null}
    </div>
  );
}
