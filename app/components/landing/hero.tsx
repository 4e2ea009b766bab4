import { Link } from "react-router";
import { Icon } from "~/components/icons";
import { SectionLink } from "~/components/section-link";
import { HERO_IMAGE, IMAGE_HEIGHT, IMAGE_WIDTH, imageSrc, imageSrcSet } from "~/lib/gallery";

// The cards and the first badge say what the product promises; the page's inline script replaces their words with
// the figures measured over the last 30 days (GET /api/figures) when there are enough jobs to measure
// (docs/decisions/0185-measured-landing-figures.md, 0231-figures-from-the-agents-side.md). Without the script, or
// with too few jobs, no number is shown. No rating, testimonial or "automated" claim: nothing measures them.
const BADGES = ["24/7 availability"];

function FloatingCard({
  figure,
  label,
  value,
  icon,
  className,
}: {
  figure: "success" | "time";
  label: string;
  value: string;
  icon: "bolt" | "check";
  className: string;
}) {
  return (
    <div
      className={`absolute flex items-center gap-3 rounded-xl bg-white px-4 py-3 shadow-xl ${className}`}
      data-testid={`figure-${figure}`}
    >
      <span className="inline-flex h-9 w-9 items-center justify-center rounded-lg bg-brand-50 text-brand-700">
        <Icon name={icon} className="h-5 w-5" />
      </span>
      <span>
        <span className="block text-xs font-medium text-muted" data-figure-label={figure}>
          {label}
        </span>
        <span className="block text-lg font-bold leading-tight" data-figure-value={figure}>
          {value}
        </span>
      </span>
    </div>
  );
}

/** Shared with the page's preload link so the browser fetches the same candidate. */
export const HERO_SIZES = "(min-width: 1152px) 528px, (min-width: 1024px) 45vw, calc(100vw - 3rem)";

export function Hero({ startHref }: { startHref: string }) {
  return (
    <section className="overflow-hidden bg-gradient-to-b from-brand-50 to-white">
      <div className="container-page grid items-center gap-12 py-12 sm:py-20 lg:grid-cols-2">
        <div>
          <h1 className="text-4xl font-extrabold tracking-tight sm:text-6xl">Transform Spaces Instantly</h1>
          <p className="mt-4 max-w-xl text-lg text-muted">
            Professional virtual staging powered by AI. Transform any space in seconds.
          </p>
          <div className="mt-8 flex flex-wrap gap-3">
            <Link to={startHref} className="btn-primary px-6 text-base">
              Start Staging Now
            </Link>
            <SectionLink section="before-after-gallery" className="btn-secondary px-6 text-base">
              View Gallery
            </SectionLink>
          </div>
          <ul className="mt-8 flex flex-wrap gap-x-6 gap-y-2 text-sm font-medium">
            <li className="flex items-center gap-1.5">
              <Icon name="check" className="h-4 w-4 text-success" />
              <span data-figure-value="badge">Results usually in under a minute</span>
            </li>
            {BADGES.map((b) => (
              <li key={b} className="flex items-center gap-1.5">
                <Icon name="check" className="h-4 w-4 text-success" />
                {b}
              </li>
            ))}
          </ul>
        </div>
        <div className="relative mx-2 sm:mx-6">
          <img
            src={imageSrc(HERO_IMAGE.name)}
            srcSet={imageSrcSet(HERO_IMAGE.name)}
            sizes={HERO_SIZES}
            width={IMAGE_WIDTH}
            height={IMAGE_HEIGHT}
            alt={HERO_IMAGE.alt}
            fetchPriority="high"
            className="h-auto w-full rounded-2xl shadow-2xl ring-1 ring-black/5"
          />
          <FloatingCard
            figure="time"
            icon="bolt"
            label="Processing Time"
            value="Usually under a minute"
            className="-bottom-5 -left-2 sm:-left-6"
          />
          <FloatingCard
            figure="success"
            icon="check"
            label="A failed job"
            value="Costs nothing"
            className="-top-5 -right-2 sm:-right-6"
          />
        </div>
      </div>
    </section>
  );
}
