import { type PointerEvent as ReactPointerEvent, useCallback, useEffect, useId, useRef, useState } from "react";
import { type PixelSize, paintStrokes, type Stroke } from "~/lib/mask";

// The removal brush (issue 33, part 5): a canvas over the photo at its display size, painted with a mouse, a pen or
// a finger (pointer events), with a brush size, undo (the last stroke) and clear. Strokes are kept in the image's
// own pixels, so the mask made from them (app/lib/mask.ts) is the image's size whatever the screen.
// docs/decisions/0195-removal-brush-masks.md

/** Brush widths, as a share of the image's width (the same on a phone and a desktop). */
const BRUSH_SIZES = [
  ["Small", 0.025],
  ["Medium", 0.05],
  ["Large", 0.1],
] as const;
/** What is painted, shown over the photo (the canvas is half transparent, so strokes never darken each other). */
const PAINT = "#e11d48";

/** The strokes painted on one image, with undo and clear; they start over when the image changes. */
export function useBrush(src: string | null) {
  const [strokes, setStrokes] = useState<Stroke[]>([]);
  const [size, setSize] = useState<PixelSize | null>(null);
  const [shown, setShown] = useState(src);
  if (shown !== src) {
    setShown(src);
    setStrokes([]);
    setSize(null);
  }
  return {
    strokes,
    size,
    setSize,
    add: (s: Stroke) => setStrokes((all) => [...all, s]),
    undo: () => setStrokes((all) => all.slice(0, -1)),
    clear: () => setStrokes([]),
  };
}

export type Brush = ReturnType<typeof useBrush>;

export function BrushCanvas({ src, knownSize, brush }: { src: string; knownSize?: PixelSize; brush: Brush }) {
  const id = useId();
  const canvas = useRef<HTMLCanvasElement>(null);
  const img = useRef<HTMLImageElement>(null);
  const live = useRef<Stroke | null>(null);
  const [sizeIndex, setSizeIndex] = useState(1);
  const { strokes, size, setSize } = brush;

  /** Fits the canvas's pixels to its display size and paints every stroke (and the one being drawn). */
  const redraw = useCallback(() => {
    const c = canvas.current;
    const ctx = c?.getContext("2d");
    if (!c || !ctx || !size) return;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(c.clientWidth * ratio));
    const height = Math.max(1, Math.round(c.clientHeight * ratio));
    if (c.width !== width || c.height !== height) {
      c.width = width;
      c.height = height;
    }
    ctx.clearRect(0, 0, width, height);
    ctx.fillStyle = PAINT;
    ctx.strokeStyle = PAINT;
    paintStrokes(ctx, live.current ? [...strokes, live.current] : strokes, width / size.width);
  }, [strokes, size]);

  useEffect(() => {
    redraw();
    const c = canvas.current;
    if (!c || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => redraw());
    observer.observe(c);
    return () => observer.disconnect();
  }, [redraw]);

  // The image's pixel size: the server's figure for a version, the decoded image's for the original.
  const knownWidth = knownSize?.width;
  const knownHeight = knownSize?.height;
  const measure = useCallback(() => {
    const i = img.current;
    if (knownWidth && knownHeight) setSize({ width: knownWidth, height: knownHeight });
    else if (i?.complete && i.naturalWidth > 0) setSize({ width: i.naturalWidth, height: i.naturalHeight });
  }, [knownWidth, knownHeight, setSize]);
  useEffect(measure, [measure]);

  function at(e: ReactPointerEvent<HTMLCanvasElement>): [number, number] {
    const r = e.currentTarget.getBoundingClientRect();
    const s = size!;
    const x = Math.min(s.width, Math.max(0, ((e.clientX - r.left) / r.width) * s.width));
    const y = Math.min(s.height, Math.max(0, ((e.clientY - r.top) / r.height) * s.height));
    return [Math.round(x * 10) / 10, Math.round(y * 10) / 10];
  }

  function down(e: ReactPointerEvent<HTMLCanvasElement>) {
    if (!size || (e.pointerType === "mouse" && e.button !== 0)) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    live.current = { size: BRUSH_SIZES[sizeIndex]![1] * size.width, points: at(e) };
    redraw();
  }

  function move(e: ReactPointerEvent<HTMLCanvasElement>) {
    if (!live.current) return;
    live.current.points.push(...at(e));
    redraw();
  }

  function up() {
    const stroke = live.current;
    live.current = null;
    if (stroke) brush.add(stroke);
  }

  return (
    <div className="space-y-2" data-testid="brush">
      <p className="text-sm text-muted" id={`${id}-help`}>
        Paint over what should go, with your mouse or a finger. Only what you paint is removed; the rest of the photo
        stays as it is. Painting happens in your browser and needs JavaScript.
      </p>
      <div className="relative overflow-hidden rounded-xl bg-slate-200">
        <img
          ref={img}
          src={src}
          alt="What you paint on"
          className="block h-auto w-full select-none"
          draggable={false}
          onLoad={measure}
        />
        <canvas
          ref={canvas}
          className="absolute inset-0 h-full w-full cursor-crosshair opacity-55"
          style={{ touchAction: "none" }}
          aria-label="Paint over what should go"
          aria-describedby={`${id}-help`}
          data-testid="brush-canvas"
          data-ready={size ? "true" : "false"}
          onPointerDown={down}
          onPointerMove={move}
          onPointerUp={up}
          onPointerCancel={up}
          onLostPointerCapture={up}
        />
      </div>
      <div className="flex flex-wrap items-end gap-2">
        <div>
          <label htmlFor={`${id}-size`} className="label">
            Brush size
          </label>
          <select
            id={`${id}-size`}
            className="input"
            value={sizeIndex}
            onChange={(e) => setSizeIndex(Number(e.target.value))}
          >
            {BRUSH_SIZES.map(([name], i) => (
              <option key={name} value={i}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="btn-secondary" disabled={strokes.length === 0} onClick={brush.undo}>
          Undo
        </button>
        <button type="button" className="btn-secondary" disabled={strokes.length === 0} onClick={brush.clear}>
          Clear
        </button>
        <span className="text-xs text-muted" data-testid="brush-strokes" aria-live="polite">
          {strokes.length === 1 ? "1 stroke" : `${strokes.length} strokes`}
        </span>
      </div>
    </div>
  );
}
