import { useState } from "react";
import { useJob, type VersionView } from "~/lib/use-job";
import { QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES } from "~/shared/catalog";
import { JobControls } from "./job-status";
import { Modal } from "./modal";
import { MISSING_OPTIONS, RoomAndStyle, useRoomAndStyle } from "./option-selects";
import { ResultCompare } from "./result-compare";
import { useVersions, VersionsList } from "./versions-list";

// Opened from a photo on /dashboard: remove or add furniture, and the photo's
// versions with compare and download.

const ROOMS = QUICK_ROOM_TYPES.map((r) => ({ value: r.name, label: r.name }));
const STYLES = QUICK_FURNITURE_STYLES.map((f) => ({ value: f.name, label: f.name }));
const ACTIONS = [
  ["remove", "Remove existing furniture"],
  ["add", "Add furniture"],
] as const;

export function QuickDialog({
  photoId,
  photoName,
  onClose,
  onChanged,
}: {
  photoId: string;
  photoName: string;
  onClose: () => void;
  onChanged: () => void;
}) {
  const [refresh, setRefresh] = useState(0);
  const versions = useVersions(photoId, refresh);
  const job = useJob(() => {
    setRefresh((n) => n + 1);
    onChanged();
  });
  const [action, setAction] = useState<"" | "remove" | "add">("");
  const choice = useRoomAndStyle();
  const { room, style } = choice;
  const [compare, setCompare] = useState<VersionView | null>(null);
  const ready = action === "remove" || (action === "add" && choice.chosen);

  function processPhoto() {
    if (!ready) return job.setError(MISSING_OPTIONS);
    void job.run(
      photoId,
      action === "remove" ? { kind: "removal" } : { kind: "stage", roomType: room, designStyle: style },
    );
  }

  const shown = compare ?? job.version;
  return (
    <Modal title={photoName} onClose={onClose} testId="quick-dialog">
      <fieldset className="space-y-2">
        <legend className="label">What should we do?</legend>
        {ACTIONS.map(([value, text]) => (
          <label key={value} className="flex items-center gap-2 text-sm">
            <input type="radio" name="quick-action" checked={action === value} onChange={() => setAction(value)} />
            {text}
          </label>
        ))}
      </fieldset>
      {action === "add" ? (
        <RoomAndStyle {...choice.fields} rooms={ROOMS} styles={STYLES} styleLabel="Furniture style" />
      ) : null}
      <JobControls label="Process Photo" ready={ready} job={job} onClick={processPhoto} />
      {shown ? (
        <div className="space-y-2" data-testid="quick-result">
          <ResultCompare key={shown.id} before={`/api/photos/${photoId}/original`} after={shown.imageUrl} />
        </div>
      ) : null}
      <VersionsList versions={versions} onCompare={setCompare} />
    </Modal>
  );
}
