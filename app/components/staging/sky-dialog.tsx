import { useJob } from "~/lib/use-job";
import { SKY_TYPES } from "~/shared/catalog";
import { JobError, JobProgress } from "./job-status";
import { Modal } from "./modal";
import { ResultCompare } from "./result-compare";
import { skyLabel } from "./versions-list";

// Replace the sky of a photo already in the library (the photo view's "Sky"): the same job request as the AI
// Designer's sky buttons (POST /api/photos/:id/jobs, kind "sky", one credit), from the version being shown.

export function SkyDialog({
  photoId,
  photoName,
  sourceVersionId,
  onClose,
  onChanged,
}: {
  photoId: string;
  photoName: string;
  /** The version the sky is replaced in ("original" for the photo itself). */
  sourceVersionId: string;
  onClose: () => void;
  onChanged: () => void;
}) {
  const job = useJob(onChanged);
  return (
    <Modal title={`Replace the sky: ${photoName}`} onClose={onClose} testId="sky-dialog">
      <p className="text-sm text-muted">One credit. A failed job costs nothing.</p>
      <fieldset className="flex flex-wrap gap-2" aria-label="Replace the sky">
        {SKY_TYPES.map((s) => (
          <button
            key={s}
            type="button"
            className="btn-secondary"
            disabled={job.busy}
            onClick={() => void job.run(photoId, { kind: "sky", skyType: s, sourceVersionId })}
          >
            {skyLabel(s)}
          </button>
        ))}
      </fieldset>
      {job.busy ? <JobProgress elapsed={job.elapsed} /> : null}
      <JobError message={job.error} />
      {job.version ? (
        <ResultCompare before={`/api/photos/${photoId}/original`} after={job.version.imageUrl} afterLabel="New sky" />
      ) : null}
    </Modal>
  );
}
