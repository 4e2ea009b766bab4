import { useEffect, useState } from "react";
import { startJob, useJob } from "~/lib/use-job";
import { QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES } from "~/shared/catalog";
import { creditsLabel } from "~/shared/listing";
import type { VersionView } from "~/shared/version-view";
import { JobControls } from "./job-status";
import { Modal } from "./modal";
import { MISSING_OPTIONS, RoomAndStyle, useRoomAndStyle } from "./option-selects";
import { ResultCompare } from "./result-compare";
import { AdvancedOptions, advancedBody, SourceSelect, useAdvanced, VariationsSelect } from "./staging-extras";
import { useVersions, VersionsList } from "./versions-list";

// Opened from a photo on /dashboard: remove or add furniture (from the
// original or any version, in up to 4 variations, with the plan's advanced
// options), and the photo's versions: what each was made from, compare,
// download, choose the one shown, re-roll.

const ROOMS = QUICK_ROOM_TYPES.map((r) => ({ value: r.name, label: r.name }));
const STYLES = QUICK_FURNITURE_STYLES.map((f) => ({ value: f.name, label: f.name }));
const ACTIONS = [
  ["remove", "Remove existing furniture"],
  ["add", "Add furniture"],
] as const;

export function QuickDialog({
  photoId,
  photoName,
  plan,
  onClose,
  onChanged,
  initialAction = "",
}: {
  photoId: string;
  photoName: string;
  /** The action already chosen when it opens (the photo view's "Stage" and "Remove furniture"). */
  initialAction?: "" | "remove" | "add";
  /** The user's plan name: advanced options are shown disabled without one that includes them. */
  plan: string | null;
  onClose: () => void;
  onChanged: () => void;
}) {
  const [refresh, setRefresh] = useState(0);
  const versions = useVersions(photoId, refresh);
  const job = useJob(() => {
    setRefresh((n) => n + 1);
    onChanged();
  });
  const [action, setAction] = useState<"" | "remove" | "add">(initialAction);
  const choice = useRoomAndStyle();
  const { room, style } = choice;
  const [compare, setCompare] = useState<VersionView | null>(null);
  // Not chosen yet: staging starts from the original, removal from the newest version (as the server does).
  const [chosenFrom, setFrom] = useState<string | null>(null);
  const from = chosenFrom ?? (action === "remove" ? (versions?.[0]?.id ?? "original") : "original");
  const [variations, setVariations] = useState(1);
  const advanced = useAdvanced();
  const ready = action === "remove" || (action === "add" && choice.chosen);
  const cost = action === "add" ? variations : 1;

  // The room just emptied is what "Add furniture" starts from next (remove, then stage it fresh).
  const made = job.version;
  useEffect(() => {
    if (made?.kind === "removal") setFrom(made.id);
  }, [made]);

  function processPhoto() {
    if (!ready) return job.setError(MISSING_OPTIONS);
    const source = { sourceVersionId: from };
    void job.run(
      photoId,
      action === "remove"
        ? { kind: "removal", ...source }
        : { kind: "stage", roomType: room, designStyle: style, variations, ...advancedBody(advanced.value), ...source },
    );
  }

  async function keep(v: VersionView) {
    const res = await fetch(`/api/photos/${photoId}/versions/${v.id}/keep`, { method: "POST" }).catch(() => null);
    if (!res?.ok) {
      const body = (await res?.json().catch(() => null)) as { error?: string } | null;
      return job.setError(body?.error ?? "Could not keep this result. Try again.");
    }
    setRefresh((n) => n + 1);
    onChanged();
  }

  async function choose(v: VersionView) {
    const res = await fetch(`/api/photos/${photoId}/versions/${v.id}/choose`, { method: "POST" }).catch(() => null);
    if (!res?.ok) return job.setError("Could not change the shown version. Try again.");
    setRefresh((n) => n + 1);
    onChanged();
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
      {action !== "" ? <SourceSelect versions={versions} value={from} onChange={setFrom} /> : null}
      {action === "add" ? (
        <>
          <RoomAndStyle {...choice.fields} rooms={ROOMS} styles={STYLES} styleLabel="Furniture style" />
          <VariationsSelect value={variations} onChange={setVariations} />
          <AdvancedOptions plan={plan} value={advanced.value} onChange={advanced.set} />
        </>
      ) : null}
      <JobControls
        label="Process Photo"
        cost={action === "" ? undefined : creditsLabel(cost)}
        ready={ready}
        job={job}
        onClick={processPhoto}
      />
      {shown ? (
        <div className="space-y-2" data-testid="quick-result">
          <ResultCompare key={shown.id} before={`/api/photos/${photoId}/original`} after={shown.imageUrl} />
        </div>
      ) : null}
      <VersionsList
        versions={versions}
        onCompare={setCompare}
        onChoose={(v) => void choose(v)}
        onKeep={(v) => void keep(v)}
        onReroll={(v, acceptCharge) => void job.track(() => startJob(`/api/jobs/${v.jobId}/reroll`, { acceptCharge }))}
      />
    </Modal>
  );
}
