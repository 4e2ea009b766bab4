import { useEffect, useId, useRef, useState, useSyncExternalStore } from "react";
import { PrepareError, preparePhoto } from "~/lib/image-prep";
import { type UploadSnapshot, UploadTask, xhrTransport } from "~/lib/upload-task";
import { checkChosenFile, UPLOAD_HINT, UPLOAD_MESSAGES } from "~/shared/upload-rules";

export interface UploadedPhoto {
  id: string;
  name: string;
}

type Phase =
  | { kind: "idle"; message: string | null }
  | { kind: "preparing"; fileName: string }
  | { kind: "task"; task: UploadTask<UploadedPhoto> };

const NO_TASK: UploadSnapshot<UploadedPhoto> = {
  state: "running",
  sentBytes: 0,
  totalBytes: 0,
  retrying: false,
  error: null,
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

/**
 * Drop or choose a photo; it is checked, downscaled and sent in resumable
 * chunks with a progress bar and Pause, Resume and Cancel. Uploading needs
 * JavaScript (the photo is prepared in the browser); without it the panel says so.
 */
export function UploadPanel({ onUploaded }: { onUploaded?: (photo: UploadedPhoto) => void }) {
  const inputId = useId();
  const hintId = useId();
  const [phase, setPhase] = useState<Phase>({ kind: "idle", message: null });
  const [dragging, setDragging] = useState(false);
  const task = phase.kind === "task" ? phase.task : null;
  const snap = useTaskSnapshot(task);
  const reported = useRef<string | null>(null);
  const onUploadedRef = useRef(onUploaded);
  onUploadedRef.current = onUploaded;

  useEffect(() => {
    if (snap.state === "success" && snap.photo && reported.current !== snap.photo.id) {
      reported.current = snap.photo.id;
      onUploadedRef.current?.(snap.photo);
    }
  }, [snap]);

  // Leaving the page would stop the upload: ask first.
  const busy = phase.kind === "preparing" || (task !== null && ["running", "pausing", "paused"].includes(snap.state));
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
    try {
      const prepared = await preparePhoto(file);
      const next = new UploadTask<UploadedPhoto>(
        { photo: prepared.photo, thumb: prepared.thumb, name: file.name, type: prepared.type },
        xhrTransport(),
      );
      setPhase({ kind: "task", task: next });
      next.start();
    } catch (err) {
      setPhase({ kind: "idle", message: err instanceof PrepareError ? err.message : UPLOAD_MESSAGES.unreadable });
    }
  }

  const showDropzone = phase.kind === "idle" || (task && ["success", "canceled", "error"].includes(snap.state));
  const percent = snap.totalBytes > 0 ? Math.floor((snap.sentBytes / snap.totalBytes) * 100) : 0;

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
          <svg
            aria-hidden="true"
            viewBox="0 0 24 24"
            className="h-8 w-8 text-brand-600"
            fill="none"
            stroke="currentColor"
            strokeWidth="2"
          >
            <path d="M12 16V4m0 0-4 4m4-4 4 4M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3" />
          </svg>
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

      {task ? (
        <div className="space-y-3">
          <div className="flex items-baseline justify-between gap-3 text-sm">
            <span className="truncate font-medium">{task.source.name}</span>
            <span className="shrink-0 text-muted" data-testid="upload-progress-text">
              {formatMb(snap.sentBytes)} of {formatMb(snap.totalBytes)} · {percent}%
            </span>
          </div>
          <div
            role="progressbar"
            aria-label="Upload progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            className="h-3 overflow-hidden rounded-full bg-slate-100"
          >
            <div
              className={`h-3 rounded-full transition-[width] ${snap.state === "error" ? "bg-danger" : "bg-brand-600"}`}
              style={{ width: `${percent}%` }}
            />
          </div>
          <p role="status" className="text-sm" data-testid="upload-status">
            {snap.retrying ? UPLOAD_MESSAGES.network : STATE_TEXT[snap.state]}
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
      ) : null}
    </div>
  );
}
