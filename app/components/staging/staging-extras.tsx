import { useId, useState } from "react";
import type { JobBody } from "~/lib/use-job";
import { creditsLabel, MAX_VARIATIONS } from "~/shared/listing";
import {
  ADVANCED_OPTIONS_MESSAGE,
  COLOR_SCHEMES,
  CREATIVITY_LEVELS,
  DEFAULT_CREATIVITY,
  INSTRUCTION_HELP,
  PROMPT_MAX,
  planAllowsAdvanced,
  SPECIALITY_DECORS,
} from "~/shared/staging-options";
import type { VersionView } from "~/shared/version-view";
import { versionLabel } from "./versions-list";

// The choices a staging request may carry beyond room and style: how many
// results (variations, a credit each), the advanced options of the plans that
// include them, and which version of the photo it starts from.
// docs/decisions/0140-batches-variations-rerolls.md

/** How many results a staging request asks for, and the credits that costs. */
export function VariationsSelect({ value, onChange }: { value: number; onChange: (n: number) => void }) {
  const id = useId();
  return (
    <div>
      <label htmlFor={id} className="label">
        Results
      </label>
      <select
        id={id}
        className="input"
        value={value}
        onChange={(e) => onChange(Number(e.target.value))}
        data-testid="variations"
      >
        {Array.from({ length: MAX_VARIATIONS }, (_, i) => i + 1).map((n) => (
          <option key={n} value={n}>
            {n === 1 ? "1 result" : `${n} variations`} · {creditsLabel(n)}
          </option>
        ))}
      </select>
    </div>
  );
}

export interface AdvancedChoice {
  colorScheme: string;
  specialityDecor: string;
  designCreativity: number;
  prompt: string;
}

const NO_ADVANCED: AdvancedChoice = {
  colorScheme: "COLOR_SCHEME_0",
  specialityDecor: "SPECIALITY_DECOR_0",
  designCreativity: DEFAULT_CREATIVITY,
  prompt: "",
};

type AdvancedBody = Pick<JobBody, "colorScheme" | "specialityDecor" | "designCreativity" | "prompt">;

/** The advanced fields of a request body: only what differs from the defaults (the server checks the plan). */
export function advancedBody(a: AdvancedChoice): AdvancedBody {
  const body: AdvancedBody = {};
  if (a.colorScheme !== NO_ADVANCED.colorScheme) body.colorScheme = a.colorScheme;
  if (a.specialityDecor !== NO_ADVANCED.specialityDecor) body.specialityDecor = a.specialityDecor;
  if (a.designCreativity !== NO_ADVANCED.designCreativity) body.designCreativity = a.designCreativity;
  if (a.prompt.trim()) body.prompt = a.prompt.trim();
  return body;
}

export function useAdvanced() {
  const [value, setValue] = useState<AdvancedChoice>(NO_ADVANCED);
  return { value, set: (patch: Partial<AdvancedChoice>) => setValue((v) => ({ ...v, ...patch })) };
}

/**
 * The provider's colour palettes and seasonal decor (its own names), how far the
 * result may depart from the photo, and an instruction. On a plan without
 * advanced customization they are shown disabled with why.
 */
export function AdvancedOptions({
  plan,
  value,
  onChange,
}: {
  plan: string | null;
  value: AdvancedChoice;
  onChange: (patch: Partial<AdvancedChoice>) => void;
}) {
  const allowed = planAllowsAdvanced(plan);
  const id = useId();
  const colors = COLOR_SCHEMES.find((c) => c.code === value.colorScheme)?.colors ?? [];
  const swatch = colors.length > 0 ? `linear-gradient(90deg, ${colors.join(", ")})` : undefined;
  return (
    <details className="rounded-lg border border-line p-3" data-testid="advanced-options">
      <summary className="cursor-pointer text-sm font-semibold">
        Advanced options
        {allowed ? null : <span className="ml-2 font-normal text-muted">{ADVANCED_OPTIONS_MESSAGE}</span>}
      </summary>
      <fieldset disabled={!allowed} className="mt-3 grid gap-3 disabled:opacity-60 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-palette`} className="label">
            Colour palette
          </label>
          <div className="flex items-center gap-2">
            <span
              aria-hidden="true"
              className="h-6 w-6 shrink-0 rounded-full border border-line"
              style={{ background: swatch }}
            />
            <select
              id={`${id}-palette`}
              className="input"
              value={value.colorScheme}
              onChange={(e) => onChange({ colorScheme: e.target.value })}
            >
              {COLOR_SCHEMES.map((c) => (
                <option key={c.code} value={c.code}>
                  {c.name}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div>
          <label htmlFor={`${id}-decor`} className="label">
            Seasonal decor
          </label>
          <select
            id={`${id}-decor`}
            className="input"
            value={value.specialityDecor}
            onChange={(e) => onChange({ specialityDecor: e.target.value })}
          >
            {SPECIALITY_DECORS.map((d) => (
              <option key={d.code} value={d.code}>
                {d.name}
              </option>
            ))}
          </select>
        </div>
        <div className="sm:col-span-2">
          <label htmlFor={`${id}-creativity`} className="label">
            How far from the photo
          </label>
          <select
            id={`${id}-creativity`}
            className="input"
            value={value.designCreativity}
            onChange={(e) => onChange({ designCreativity: Number(e.target.value) })}
            data-testid="creativity"
          >
            {CREATIVITY_LEVELS.map((l) => (
              <option key={l.value} value={l.value}>
                {l.name}
              </option>
            ))}
          </select>
        </div>
        <div className="sm:col-span-2">
          <label htmlFor={`${id}-prompt`} className="label">
            Instruction (optional)
          </label>
          <textarea
            id={`${id}-prompt`}
            className="input min-h-16"
            maxLength={PROMPT_MAX}
            value={value.prompt}
            placeholder="e.g. a reading chair by the window"
            aria-describedby={`${id}-prompt-help`}
            onChange={(e) => onChange({ prompt: e.target.value })}
          />
          <p id={`${id}-prompt-help`} className="text-xs text-muted">
            {INSTRUCTION_HELP} {value.prompt.length}/{PROMPT_MAX} characters
          </p>
        </div>
      </fieldset>
    </details>
  );
}

/** Which version a job starts from: the original or any version (e.g. the emptied room). */
export function SourceSelect({
  versions,
  value,
  onChange,
}: {
  versions: VersionView[] | null;
  value: string;
  onChange: (v: string) => void;
}) {
  const id = useId();
  if (!versions || versions.length === 0) return null;
  return (
    <div>
      <label htmlFor={id} className="label">
        Start from
      </label>
      <select
        id={id}
        className="input"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        data-testid="source-select"
      >
        <option value="original">The original photo</option>
        {versions.map((v) => (
          <option key={v.id} value={v.id}>
            {versionLabel(v)} · {new Date(v.createdAt).toLocaleString()}
          </option>
        ))}
      </select>
    </div>
  );
}
