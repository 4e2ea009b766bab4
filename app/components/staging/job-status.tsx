import { EXPECTED_SECONDS } from "~/lib/use-job";
import type { VersionView } from "~/shared/version-view";

// What a dialog shows while a job runs and when it fails.

export function JobProgress({ elapsed }: { elapsed: number }) {
  const pct = Math.min(95, Math.round((elapsed / EXPECTED_SECONDS) * 100));
  return (
    <div className="space-y-1" data-testid="job-progress">
      <div
        role="progressbar"
        aria-label="AI processing"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        className="h-2 overflow-hidden rounded-full bg-slate-200"
      >
        <div className="h-full bg-brand-600 transition-all" style={{ width: `${pct}%` }} />
      </div>
      <p className="text-xs text-muted">
        {elapsed} s elapsed · usually about {EXPECTED_SECONDS} s. You can close this: the result will be in your
        library.
      </p>
    </div>
  );
}

export function JobError({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p className="alert-error" role="alert" data-testid="job-error">
      {message}
    </p>
  );
}

/** The main button of a dialog: its label, or the busy text while the job runs. */
function JobButton({
  label,
  ready,
  busy,
  onClick,
}: {
  label: string;
  ready: boolean;
  busy: boolean;
  onClick: () => void;
}) {
  return (
    <button type="button" className="btn-primary w-full" disabled={!ready || busy} onClick={onClick}>
      {busy ? "Processing your design..." : label}
    </button>
  );
}

/** The main button, then the progress while the job runs, then its error: the same in every dialog. */
export function JobControls({
  label,
  ready,
  job,
  onClick,
  cost,
}: {
  label: string;
  ready: boolean;
  job: { busy: boolean; elapsed: number; error: string | null; version?: VersionView | null };
  onClick: () => void;
  /** What starting it costs, said beside the button (whose text stays the spec's). */
  cost?: string;
}) {
  return (
    <>
      {cost ? (
        <p className="text-sm text-muted" data-testid="job-cost">
          Uses {cost}.
        </p>
      ) : null}
      <JobButton label={label} ready={ready} busy={job.busy} onClick={onClick} />
      {job.busy ? <JobProgress elapsed={job.elapsed} /> : null}
      <JobError message={job.error} />
      <JobFlagged version={job.busy ? null : (job.version ?? null)} />
    </>
  );
}

/** A job that ended with a flagged result: what to check and where (docs/decisions/0215-flag-when-unsure.md). */
export function JobFlagged({ version }: { version: VersionView | null }) {
  const message = version?.structure?.message;
  if (!message) return null;
  return (
    <p className="alert-info" role="status" data-testid="job-flagged">
      {message}
    </p>
  );
}
