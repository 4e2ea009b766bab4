import { useEffect } from "react";
import { Link, useLocation } from "react-router";
import { CompareSlider } from "~/components/compare-slider";
import { Faq } from "~/components/faq";
import { landingFaq } from "~/components/landing/faq-items";
import { Comparison, FeatureGrid } from "~/components/landing/features";
import { Hero } from "~/components/landing/hero";
import { LIVING_ROOM } from "~/lib/gallery";
import { getStartedPath, scrollTarget, scrollToSection } from "~/lib/get-started";
import { useRootData } from "~/root";
import type { Route } from "./+types/home";

// Served without React in the browser: the page works as HTML, app/lib/islands.ts moves its sliders and reveals.
export const handle = { hydrate: false };

export const meta: Route.MetaFunction = () => [
  { title: "Stagewise: virtual staging for real-estate photos" },
  { name: "description", content: "Professional virtual staging powered by AI. Transform any space in seconds." },
];

// The hero picture is the largest paint on a phone. React preloads it in the head by itself (an <img> with
// fetchPriority="high" in the shell), so the route adds no preload link of its own: that was the second copy.

/** Scrolls to the section another page asked for with `{ scrollTo }` router state. */
function useScrollTarget() {
  const location = useLocation();
  useEffect(() => {
    const target = scrollTarget(location.state);
    if (target) scrollToSection(target);
  }, [location]);
}

export default function Home() {
  const data = useRootData();
  const start = getStartedPath(data?.user);
  useScrollTarget();
  return (
    <>
      <Hero startHref={start} />

      <section id="features" className="scroll-mt-20 py-20 sm:py-24" aria-labelledby="features-title">
        <div className="container-page">
          <div className="mx-auto max-w-2xl text-center">
            <h2 id="features-title" className="text-3xl font-bold tracking-tight sm:text-4xl">
              Why Choose Our Virtual Staging?
            </h2>
            <p className="mt-4 text-lg text-muted">
              Everything you need to turn empty rooms into listings buyers remember, without a truck of furniture.
            </p>
          </div>
          <FeatureGrid />
          <div className="mt-12 text-center">
            <Link to={start} className="btn-primary px-6 text-base">
              Start Transforming Your Spaces
            </Link>
          </div>
        </div>
      </section>

      <section className="bg-slate-50 py-20 sm:py-24" aria-labelledby="why-us-title">
        <div className="container-page max-w-4xl">
          <h2 id="why-us-title" className="text-center text-3xl font-bold tracking-tight sm:text-4xl">
            Why Choose Us?
          </h2>
          <Comparison />
        </div>
      </section>

      <section id="before-after-gallery" className="scroll-mt-20 py-20 sm:py-24" aria-labelledby="before-after-title">
        {/* The plans page's close button returns to /#gallery. */}
        <span id="gallery" className="block scroll-mt-20" />
        <div className="container-page max-w-4xl">
          <div className="text-center">
            <h2 id="before-after-title" className="text-3xl font-bold tracking-tight sm:text-4xl">
              Before &amp; After Gallery
            </h2>
            <p className="mt-4 text-lg text-muted">
              Drag the handle, or focus it and use the arrow keys, to compare the empty room with its staged version.
            </p>
          </div>
          <CompareSlider item={LIVING_ROOM} sizes="(min-width: 928px) 848px, calc(100vw - 2rem)" className="mt-10" />
          <p className="mt-3 text-center text-sm text-muted">Example illustration.</p>
          <p className="mt-4 text-center">
            <Link to="/gallery" className="font-semibold text-brand-700 underline">
              See more transformations
            </Link>
          </p>
        </div>
      </section>

      <section className="bg-slate-50 py-20 sm:py-24" aria-labelledby="faq-title">
        <div className="container-page max-w-3xl">
          <h2 id="faq-title" className="text-center text-3xl font-bold tracking-tight sm:text-4xl">
            Got questions?
          </h2>
          <div className="mt-10">
            <Faq name="landing-faq" items={landingFaq(data?.supportEmail ?? "")} />
          </div>
        </div>
      </section>
    </>
  );
}
