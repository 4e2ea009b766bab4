import { useState } from "react";
import { type UploadedPhoto, UploadPanel } from "~/components/library/upload-panel";
import { useJob } from "~/lib/use-job";
import { DESIGN_STYLES, ROOM_TYPES, SKY_TYPES, styleMenuLabel } from "~/shared/catalog";
import { creditsLabel } from "~/shared/listing";
import { MISSING_OPTIONS } from "~/shared/staging-options";
import { JobControls } from "./job-status";
import { Modal } from "./modal";
import { RoomAndStyle, useRoomAndStyle } from "./option-selects";
import { ResultCompare } from "./result-compare";
import { AdvancedOptions, advancedBody, useAdvanced, VariationsSelect } from "./staging-extras";
import { skyLabel } from "./versions-list";

// The AI Designer on /dashboard: upload, preview, room type, style,
// 'Transform with AI', the AI Enhanced comparison, then the sky buttons.

const NO_IMAGE = "Please select an image first";
const ROOMS = ROOM_TYPES.map((r) => ({ value: r.code, label: r.name }));
const STYLES = DESIGN_STYLES.map((d) => ({ value: d.code, label: styleMenuLabel(d) }));

export function DesignerDialog({
  plan,
  onClose,
  onChanged,
}: {
  /** The user's plan name: advanced options are shown disabled without one that includes them. */
  plan: string | null;
  onClose: () => void;
  onChanged: () => void;
}) {
  const [photo, setPhoto] = useState<UploadedPhoto | null>(null);
  const choice = useRoomAndStyle();
  const { room, style } = choice;
  const job = useJob(onChanged);
  const ready = photo !== null && choice.chosen;
  const [variations, setVariations] = useState(1);
  const advanced = useAdvanced();

  function transform() {
    if (!photo) return job.setError(NO_IMAGE);
    if (!room || !style) return job.setError(MISSING_OPTIONS);
    void job.run(photo.id, {
      kind: "stage",
      roomType: room,
      designStyle: style,
      variations,
      ...advancedBody(advanced.value),
    });
  }

  return (
    <Modal title="AI Designer" onClose={onClose} testId="designer-dialog">
      {photo ? (
        <img
          src={`/api/photos/${photo.id}/original`}
          alt={`Preview of ${photo.name}`}
          className="max-h-64 w-full rounded-xl bg-slate-100 object-contain"
          data-testid="designer-preview"
        />
      ) : (
        <UploadPanel onUploaded={(p) => setPhoto(p)} />
      )}
      <RoomAndStyle {...choice.fields} rooms={ROOMS} styles={STYLES} styleLabel="Design style" />
      <VariationsSelect value={variations} onChange={setVariations} />
      <AdvancedOptions plan={plan} value={advanced.value} onChange={advanced.set} />
      <JobControls
        label="Transform with AI"
        cost={creditsLabel(variations)}
        ready={ready}
        job={job}
        onClick={transform}
      />
      {photo && job.version ? (
        <div className="space-y-3" data-testid="designer-result">
          <p className="text-sm font-semibold text-brand-600">AI Enhanced</p>
          <ResultCompare before={`/api/photos/${photo.id}/original`} after={job.version.imageUrl} />
          <a href={job.version.downloadUrl} download className="btn-secondary">
            Download
          </a>
        </div>
      ) : null}
      {photo ? (
        <fieldset className="flex flex-wrap gap-2" aria-label="Replace the sky">
          {SKY_TYPES.map((s) => (
            <button
              key={s}
              type="button"
              className="btn-secondary"
              disabled={job.busy}
              onClick={() => void job.run(photo.id, { kind: "sky", skyType: s })}
            >
              {skyLabel(s)}
            </button>
          ))}
        </fieldset>
      ) : null}
    </Modal>
  );
}
