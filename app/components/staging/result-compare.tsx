import * as Slider from "react-compare-slider/components";
import { useReactCompareSlider } from "react-compare-slider/hooks";

/**
 * Before/after of two of our own image addresses. `changes`: the structure check's change map (a gray PNG, white
 * where it saw the room change), laid over both pictures in red, drawn by the server so it shows before any script.
 */
export function ResultCompare({
  before,
  after,
  afterLabel = "AI Enhanced",
  changes,
}: {
  before: string;
  after: string;
  afterLabel?: string;
  changes?: string | null;
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
        {changes ? (
          // The map's white and gray let the red through (a luminance mask), its black hides it: the room's changes
          // in red over both sides, cropped as the pictures are (cover, centred).
          <div
            aria-hidden="true"
            className="pointer-events-none relative h-full w-full"
            style={{
              gridArea: "1 / 1",
              zIndex: 1,
              backgroundColor: "rgb(244 63 94 / 0.8)",
              maskImage: `url("${changes}")`,
              maskMode: "luminance",
              maskSize: "cover",
              maskPosition: "center",
              maskRepeat: "no-repeat",
            }}
            data-testid="changes-overlay"
            data-src={changes}
          />
        ) : null}
        <Slider.HandleRoot aria-label="Original and result. Drag, or use the arrow keys, to compare.">
          <Slider.Handle />
        </Slider.HandleRoot>
      </Slider.Root>
    </Slider.Provider>
  );
}
