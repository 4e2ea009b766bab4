import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import * as Slider from "react-compare-slider/components";
import { useReactCompareSlider } from "react-compare-slider/hooks";
import { type UploadedPhoto, UploadPanel } from "~/components/library/upload-panel";
import { DESIGN_STYLES, QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES, ROOM_TYPES, SKY_TYPES } from "~/shared/catalog";

// The AI dialogs on /dashboard: the designer (upload, room, style, 'Transform
// with AI', sky buttons) and the quick dialog opened from a photo (remove or
// add furniture, versions). Both start a job with POST /api/photos/:id/jobs and
// poll GET /api/jobs/:id; the job runs on the server whether or not this page
// stays open, so a dropped connection loses neither the result nor the credit.

export const EXPECTED_SECONDS = 15;
const POLL_MS = 1500;
const MISSING_OPTIONS = "Please select all required options";
const NO_IMAGE = "Please select an image first";

export interface VersionView {
  id: string;
  photoId: string;
  kind: "stage" | "sky" | "removal";
  params: { roomType?: string; designStyle?: string; skyType?: string };
  createdAt: number;
  imageUrl: string;
  thumbUrl: string;
  downloadUrl: string;
}

interface JobState {
  busy: boolean;
  error: string | null;
  version: VersionView | null;
  elapsed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a job and follows it until it settles; survives network blips while polling. */
function useJob(onSettled?: () => void) {
  const [state, setState] = useState<JobState>({ busy: false, error: null, version: null, elapsed: 0 });
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  async function run(photoId: string, body: Record<string, string>) {
    const started = Date.now();
    setState((s) => ({ ...s, busy: true, error: null, elapsed: 0 }));
    const tick = setInterval(() => {
      if (alive.current) setState((s) => ({ ...s, elapsed: Math.floor((Date.now() - started) / 1000) }));
    }, 1000);
    try {
      const res = await fetch(`/api/photos/${photoId}/jobs`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = (await res.json().catch(() => ({}))) as { error?: string; job?: { id: string } };
      if (!res.ok || !answer.job) throw new Error(answer.error ?? "Failed to process image");
      for (;;) {
        await sleep(POLL_MS);
        if (!alive.current) return;
        let polled: { job: { status: string; error: string | null }; version: VersionView | null } | null = null;
        try {
          const r = await fetch(`/api/jobs/${answer.job.id}`, { cache: "no-store" });
          if (r.ok) polled = await r.json();
        } catch {
          // Offline for a moment: the job goes on on the server; ask again.
        }
        if (!polled) continue;
        if (polled.job.status === "succeeded") {
          setState({ busy: false, error: null, version: polled.version, elapsed: 0 });
          break;
        }
        if (polled.job.status === "failed") throw new Error(polled.job.error ?? "Failed to process image");
      }
    } catch (err) {
      if (alive.current) {
        setState((s) => ({
          ...s,
          busy: false,
          error: err instanceof Error ? err.message : "Failed to process image",
        }));
      }
    } finally {
      clearInterval(tick);
      onSettled?.();
    }
  }

  return { ...state, run, setError: (error: string | null) => setState((s) => ({ ...s, error })) };
}

function Progress({ elapsed }: { elapsed: number }) {
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

/** Before/after of two of our own image addresses. */
export function ResultCompare({
  before,
  after,
  afterLabel = "AI Enhanced",
}: {
  before: string;
  after: string;
  afterLabel?: string;
}) {
  const slider = useReactCompareSlider({ defaultPosition: 50, keyboardIncrement: "5%", transition: "0.15s ease-out" });
  const tag = (text: string, side: "left" | "right") => (
    <span
      className={`pointer-events-none absolute top-3 rounded-full bg-slate-900/75 px-2.5 py-1 text-xs font-semibold text-white ${
        side === "left" ? "left-3" : "right-3"
      }`}
    >
      {text}
    </span>
  );
  return (
    <Slider.Provider {...slider}>
      <Slider.Root className="aspect-[4/3] rounded-xl bg-slate-200" data-testid="result-compare">
        <Slider.Item item="itemOne">
          <Slider.Image src={before} alt="Original photo" draggable={false} />
          {tag("Original", "left")}
        </Slider.Item>
        <Slider.Item item="itemTwo">
          <Slider.Image src={after} alt={`${afterLabel} photo`} draggable={false} />
          {tag(afterLabel, "right")}
        </Slider.Item>
        <Slider.HandleRoot aria-label="Original and result. Drag, or use the arrow keys, to compare.">
          <Slider.Handle />
        </Slider.HandleRoot>
      </Slider.Root>
    </Slider.Provider>
  );
}

function Modal({
  title,
  onClose,
  children,
  testId,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} className="dialog bg-white" aria-labelledby={titleId} onClose={onClose} data-testid={testId}>
      <div className="mb-4 flex items-center justify-between gap-3">
        <h2 id={titleId} className="text-lg font-semibold">
          {title}
        </h2>
        <button type="button" className="btn-ghost min-h-9 px-3 py-1" onClick={onClose}>
          Close
        </button>
      </div>
      <div className="space-y-4">{children}</div>
    </dialog>
  );
}

function ErrorBox({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p className="alert-error" role="alert" data-testid="job-error">
      {message}
    </p>
  );
}

const skyLabel = (s: string) => `Sky: ${s[0]?.toUpperCase()}${s.slice(1)}`;

/** The designer: upload, preview, room type, style, 'Transform with AI', then sky buttons. */
export function DesignerDialog({ onClose, onChanged }: { onClose: () => void; onChanged: () => void }) {
  const [photo, setPhoto] = useState<UploadedPhoto | null>(null);
  const [room, setRoom] = useState("");
  const [style, setStyle] = useState("");
  const job = useJob(onChanged);
  const roomId = useId();
  const styleId = useId();
  const ready = photo !== null && room !== "" && style !== "";

  function transform() {
    if (!photo) return job.setError(NO_IMAGE);
    if (!room || !style) return job.setError(MISSING_OPTIONS);
    void job.run(photo.id, { kind: "stage", roomType: room, designStyle: style });
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
      <div className="grid gap-3 sm:grid-cols-2">
        <OptionSelect
          id={roomId}
          label="Room type"
          placeholder="Choose a room type"
          value={room}
          onChange={setRoom}
          options={ROOM_TYPES.map((r) => ({ value: r.code, label: r.name }))}
        />
        <OptionSelect
          id={styleId}
          label="Design style"
          placeholder="Choose a style"
          value={style}
          onChange={setStyle}
          options={DESIGN_STYLES.map((d) => ({ value: d.code, label: d.label }))}
        />
      </div>
      <button type="button" className="btn-primary w-full" disabled={!ready || job.busy} onClick={transform}>
        {job.busy ? "Processing your design..." : "Transform with AI"}
      </button>
      {job.busy ? <Progress elapsed={job.elapsed} /> : null}
      <ErrorBox message={job.error} />
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

/** Opened from a photo: remove or add furniture, and the photo's versions. */
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
  const [versions, setVersions] = useState<VersionView[] | null>(null);
  const [refresh, setRefresh] = useState(0);
  const job = useJob(() => {
    setRefresh((n) => n + 1);
    onChanged();
  });
  const [action, setAction] = useState<"" | "remove" | "add">("");
  const [room, setRoom] = useState("");
  const [style, setStyle] = useState("");
  const [compare, setCompare] = useState<VersionView | null>(null);
  const roomId = useId();
  const styleId = useId();
  const ready = action === "remove" || (action === "add" && room !== "" && style !== "");

  useEffect(() => {
    let live = true;
    void refresh;
    fetch(`/api/photos/${photoId}/versions`, { cache: "no-store" })
      .then((r) => (r.ok ? (r.json() as Promise<{ versions: VersionView[] }>) : { versions: [] }))
      .then((b: { versions: VersionView[] }) => {
        if (live) setVersions(b.versions);
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [photoId, refresh]);

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
        {(
          [
            ["remove", "Remove existing furniture"],
            ["add", "Add furniture"],
          ] as const
        ).map(([value, text]) => (
          <label key={value} className="flex items-center gap-2 text-sm">
            <input type="radio" name="quick-action" checked={action === value} onChange={() => setAction(value)} />
            {text}
          </label>
        ))}
      </fieldset>
      {action === "add" ? (
        <div className="grid gap-3 sm:grid-cols-2">
          <OptionSelect
            id={roomId}
            label="Room type"
            placeholder="Choose a room type"
            value={room}
            onChange={setRoom}
            options={QUICK_ROOM_TYPES.map((r) => ({ value: r.name, label: r.name }))}
          />
          <OptionSelect
            id={styleId}
            label="Furniture style"
            placeholder="Choose a style"
            value={style}
            onChange={setStyle}
            options={QUICK_FURNITURE_STYLES.map((f) => ({ value: f.name, label: f.name }))}
          />
        </div>
      ) : null}
      <button type="button" className="btn-primary w-full" disabled={!ready || job.busy} onClick={processPhoto}>
        {job.busy ? "Processing your design..." : "Process Photo"}
      </button>
      {job.busy ? <Progress elapsed={job.elapsed} /> : null}
      <ErrorBox message={job.error} />
      {shown ? (
        <div className="space-y-2" data-testid="quick-result">
          <ResultCompare key={shown.id} before={`/api/photos/${photoId}/original`} after={shown.imageUrl} />
        </div>
      ) : null}
      <section aria-label="Versions" className="space-y-2">
        <h3 className="text-sm font-semibold">Versions</h3>
        {versions === null ? (
          <p className="text-sm text-muted">Loading…</p>
        ) : versions.length === 0 ? (
          <p className="text-sm text-muted">No AI versions yet.</p>
        ) : (
          <ul className="grid grid-cols-2 gap-2 sm:grid-cols-3" data-testid="version-list">
            {versions.map((v, i) => (
              <li key={v.id} className="space-y-1 rounded-lg border border-line p-2 text-xs">
                <img
                  src={v.thumbUrl}
                  alt={`Version ${versions.length - i}`}
                  className="aspect-[4/3] w-full rounded object-cover"
                />
                <p>
                  {versionLabel(v)} · {new Date(v.createdAt).toLocaleString()}
                </p>
                <div className="flex gap-1">
                  <button type="button" className="btn-ghost min-h-8 px-2 py-0.5" onClick={() => setCompare(v)}>
                    Compare
                  </button>
                  <a href={v.downloadUrl} download className="btn-ghost min-h-8 px-2 py-0.5">
                    Download
                  </a>
                  {/* With the disclosure label and QR of the original page (docs/decisions/0110-mls-disclosure-and-original-pages.md). */}
                  <a
                    href={`/api/photos/${v.photoId}/versions/${v.id}/labelled`}
                    download
                    className="btn-ghost min-h-8 px-2 py-0.5"
                    data-testid="download-labelled"
                  >
                    Download for MLS
                  </a>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </Modal>
  );
}

function versionLabel(v: VersionView): string {
  if (v.kind === "sky") return skyLabel(v.params.skyType ?? "day");
  if (v.kind === "removal") return "Furniture removed";
  const style = DESIGN_STYLES.find((s) => s.code === v.params.designStyle)?.label ?? v.params.designStyle ?? "";
  const room = ROOM_TYPES.find((r) => r.code === v.params.roomType)?.name ?? v.params.roomType ?? "";
  return `${room} · ${style}`;
}

/** A labelled select with an empty first choice, so "nothing chosen yet" is visible. */
function OptionSelect({
  id,
  label,
  placeholder,
  value,
  onChange,
  options,
}: {
  id: string;
  label: string;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
  options: { value: string; label: string }[];
}) {
  return (
    <div>
      <label htmlFor={id} className="label">
        {label}
      </label>
      <select id={id} className="input" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{placeholder}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}
