import * as Slider from "react-compare-slider/components";
import { useReactCompareSlider } from "react-compare-slider/hooks";
import { type BeforeAfter, IMAGE_HEIGHT, IMAGE_WIDTH, imageSrc, imageSrcSet } from "~/lib/gallery";

// A before/after drag slider (react-compare-slider: pointer, touch, and arrow
// keys in 5% steps on a role="slider" handle that reports its value). It starts
// at 50%. The server renders it at 50% already, so it shows both halves before
// any JavaScript runs.

function Label({ children, side }: { children: string; side: "left" | "right" }) {
  return (
    <span
      className={`pointer-events-none absolute top-3 rounded-full bg-slate-900/75 px-2.5 py-1 text-xs font-semibold uppercase tracking-wide text-white ${
        side === "left" ? "left-3" : "right-3"
      }`}
    >
      {children}
    </span>
  );
}

export function CompareSlider({
  item,
  height,
  sizes,
  eager = false,
  className = "",
}: {
  item: BeforeAfter;
  /** A fixed height in px; without it the slider keeps the pictures' 3:2 shape. */
  height?: number;
  /** The `sizes` attribute: how wide the slider is drawn at each viewport width. */
  sizes: string;
  /** Load at once (above the fold) instead of lazily. */
  eager?: boolean;
  className?: string;
}) {
  // An explicit transition renders the same on the server and in the browser (the
  // library's default reads matchMedia, which the server lacks); app.css turns it
  // off for people who prefer reduced motion.
  const slider = useReactCompareSlider({ defaultPosition: 50, keyboardIncrement: "5%", transition: "0.15s ease-out" });
  const img = (name: string, alt: string) => (
    <Slider.Image
      src={imageSrc(name)}
      srcSet={imageSrcSet(name)}
      sizes={sizes}
      width={IMAGE_WIDTH}
      height={IMAGE_HEIGHT}
      alt={alt}
      loading={eager ? "eager" : "lazy"}
      decoding="async"
      draggable={false}
    />
  );
  return (
    <Slider.Provider {...slider}>
      <Slider.Root
        className={`rounded-2xl bg-slate-200 shadow-lg ${className}`}
        style={height ? { height } : { aspectRatio: `${IMAGE_WIDTH} / ${IMAGE_HEIGHT}` }}
        data-testid="compare-slider"
      >
        <Slider.Item item="itemOne">
          {img(item.before, `${item.title} before staging: ${item.beforeAlt}`)}
          <Label side="left">Before</Label>
        </Slider.Item>
        <Slider.Item item="itemTwo">
          {img(item.after, `${item.title} after virtual staging: ${item.afterAlt}`)}
          <Label side="right">After</Label>
        </Slider.Item>
        <Slider.HandleRoot aria-label={`${item.title}: before and after. Drag, or use the arrow keys, to compare.`}>
          <Slider.Handle />
        </Slider.HandleRoot>
      </Slider.Root>
    </Slider.Provider>
  );
}

/** The same slider for any two pictures of one size (the public original page, /o/<token>). */
export function ComparePictures({
  before,
  after,
  width,
  height,
  beforeLabel = "Original",
  afterLabel = "Staged",
  title,
}: {
  before: string;
  after: string;
  width: number;
  height: number;
  beforeLabel?: string;
  afterLabel?: string;
  title: string;
}) {
  const slider = useReactCompareSlider({ defaultPosition: 50, keyboardIncrement: "5%", transition: "0.15s ease-out" });
  const img = (src: string, alt: string) => (
    <Slider.Image
      src={src}
      width={width}
      height={height}
      alt={alt}
      loading="eager"
      decoding="async"
      draggable={false}
    />
  );
  return (
    <Slider.Provider {...slider}>
      <Slider.Root
        className="rounded-2xl bg-slate-200 shadow-lg"
        style={{ aspectRatio: `${width} / ${height}` }}
        data-testid="compare-slider"
      >
        <Slider.Item item="itemOne">
          {img(before, `${title}: the original photo`)}
          <Label side="left">{beforeLabel}</Label>
        </Slider.Item>
        <Slider.Item item="itemTwo">
          {img(after, `${title}: the virtually staged version`)}
          <Label side="right">{afterLabel}</Label>
        </Slider.Item>
        <Slider.HandleRoot aria-label={`${title}: original and staged. Drag, or use the arrow keys, to compare.`}>
          <Slider.Handle />
        </Slider.HandleRoot>
      </Slider.Root>
    </Slider.Provider>
  );
}
