import { useEffect, useState } from "react";
import { api } from "~/lib/api";
import { removeWhatIsPainted } from "~/lib/mask";
import { startJob, useJob } from "~/lib/use-job";
import { QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES } from "~/shared/catalog";
import { creditsLabel } from "~/shared/listing";
import { MISSING_OPTIONS } from "~/shared/staging-options";
import { usableAsSource, type VersionView } from "~/shared/version-view";
import { BrushCanvas, useBrush } from "./brush-canvas";
import { JobControls } from "./job-status";
import { Modal } from "./modal";
import { RoomAndStyle, useRoomAndStyle } from "./option-selects";
import { ResultCompare } from "./result-compare";
import { AdvancedOptions, advancedBody, SourceSelect, useAdvanced, VariationsSelect } from "./staging-extras";
import { useVersions, VersionsList } from "./versions-list";

// Opened from a photo on /dashboard: remove the furniture, or just what the
// person paints (the brush, ADR 0195), or add furniture (from the original or
// any version, in up to 4 variations, with the plan's advanced options), and
// the photo's versions: what each was made from, compare, download, choose the
// one shown, re-roll, make one the listing's look.

const ROOMS = QUICK_ROOM_TYPES.map((r) => ({ value: r.name, label: r.name }));
const STYLES = QUICK_FURNITURE_STYLES.map((f) => ({ value: f.name, label: f.name }));
const ACTIONS = [
  ["remove", "Remove existing furniture"],
  ["paint", "Remove just what I paint"],
  ["add", "Add furniture"],
] as const;
type Action = "" | (typeof ACTIONS)[number][0];

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
  initialAction?: Action;
  /** The user's plan name: advanced options are shown disabled without one that includes them. */
  plan: string | null;
  onClose: () => void;
  onChanged: () => void;
}) {
  const [refresh, setRefresh] = useState(0);
  const answer = useVersions(photoId, refresh);
  const versions = answer?.versions ?? null;
  const job = useJob(() => {
    setRefresh((n) => n + 1);
    onChanged();
  });
  const [action, setAction] = useState<Action>(initialAction);
  const choice = useRoomAndStyle();
  const { room, style } = choice;
  const [compare, setCompare] = useState<VersionView | null>(null);
  // Not chosen yet: staging starts from the original, removal from the newest version (as the server does).
  const [chosenFrom, setFrom] = useState<string | null>(null);
  const removing = action === "remove" || action === "paint";
  const sources = versions?.filter(usableAsSource) ?? null;
  const from = chosenFrom ?? (removing ? (sources?.[0]?.id ?? "original") : "original");
  const [variations, setVariations] = useState(1);
  const advanced = useAdvanced();
  // The brush paints on the image the removal starts from; its strokes start over when that image changes.
  const fromVersion = versions?.find((v) => v.id === from);
  const paintOn = from === "original" ? `/api/photos/${photoId}/original` : (fromVersion?.imageUrl ?? null);
  const brush = useBrush(action === "paint" ? paintOn : null);
  const painted = brush.strokes.length > 0 && brush.size !== null;
  const ready = action === "remove" || (action === "paint" && painted) || (action === "add" && choice.chosen);
  const cost = action === "add" ? variations : 1;

  // The room just emptied is what "Add furniture" starts from next (remove, then stage it fresh).
  const made = job.version;
  useEffect(() => {
    if (made?.kind === "removal") setFrom(made.id);
  }, [made]);

  function processPhoto() {
    if (!ready) return job.setError(MISSING_OPTIONS);
    const source = { sourceVersionId: from };
    if (action === "paint" && brush.size) {
      const { strokes, size } = brush;
      return void job.track(() => removeWhatIsPainted(photoId, from, strokes, size));
    }
    void job.run(
      photoId,
      action === "remove"
        ? { kind: "removal", ...source }
        : { kind: "stage", roomType: room, designStyle: style, variations, ...advancedBody(advanced.value), ...source },
    );
  }

  async function keep(v: VersionView) {
    const answer = await api.keep(photoId, v.id);
    if (!answer?.ok) {
      return job.setError(answer?.body.error ?? "Could not keep this result. Try again.");
    }
    setRefresh((n) => n + 1);
    onChanged();
  }

  async function choose(v: VersionView) {
    const answer = await api.choose(photoId, v.id);
    if (!answer?.ok) return job.setError("Could not change the shown version. Try again.");
    setRefresh((n) => n + 1);
    onChanged();
  }

  // "Use this look for the listing": the version becomes the style reference of the photo's folder.
  async function useLook(v: VersionView) {
    const answer = await api.useLook(photoId, v.id);
    if (!answer?.ok) {
      return job.setError(answer?.body.error ?? "Could not make it the listing's look. Try again.");
    }
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
      {action !== "" ? <SourceSelect versions={sources} value={from} onChange={setFrom} /> : null}
      {action === "paint" && paintOn ? (
        <BrushCanvas
          src={paintOn}
          knownSize={fromVersion ? { width: fromVersion.width, height: fromVersion.height } : undefined}
          brush={brush}
        />
      ) : null}
      {action === "add" ? (
        <>
          <RoomAndStyle {...choice.fields} rooms={ROOMS} styles={STYLES} styleLabel="Furniture style" />
          <VariationsSelect value={variations} onChange={setVariations} />
          <AdvancedOptions plan={plan} value={advanced.value} onChange={advanced.set} />
        </>
      ) : null}
      <JobControls
        label={action === "paint" ? "Remove what I painted" : "Process Photo"}
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
        listing={answer?.listing}
        onUseLook={(v) => void useLook(v)}
        onCompare={setCompare}
        onChoose={(v) => void choose(v)}
        onKeep={(v) => void keep(v)}
        onReroll={(v, acceptCharge) => void job.track(() => startJob({ rerollOf: v.jobId, body: { acceptCharge } }))}
      />
    </Modal>
  );
}
