import { Link } from "react-router";
import { BackLink } from "~/components/back-link";
import { Comparison, FeatureGrid } from "~/components/landing/features";
import { getStartedPath } from "~/lib/get-started";
import { useRootData } from "~/root";
import type { Route } from "./+types/features";

export const meta: Route.MetaFunction = () => [
  { title: "Features · Stagewise" },
  {
    name: "description",
    content:
      "Virtual staging, furniture removal and sky replacement for real-estate photos, usually in under a minute.",
  },
];

export default function Features() {
  const start = getStartedPath(useRootData()?.user);
  return (
    <div className="container-page py-10 sm:py-14">
      <BackLink />
      <div className="mx-auto mt-8 max-w-2xl text-center">
        <h1 className="text-4xl font-extrabold tracking-tight sm:text-5xl">Why Choose Our Virtual Staging?</h1>
        <p className="mt-4 text-lg text-muted">
          Upload a photo of an empty or cluttered room, choose a room type and a style, and get a furnished,
          listing-ready photo back in seconds.
        </p>
      </div>
      <FeatureGrid />
      <section className="mx-auto mt-20 max-w-4xl" aria-labelledby="why-us-title">
        <h2 id="why-us-title" className="text-center text-3xl font-bold tracking-tight">
          Why Choose Us?
        </h2>
        <Comparison />
      </section>
      <div className="mt-14 flex flex-wrap justify-center gap-3">
        <Link to={start} className="btn-primary px-6 text-base">
          Start Transforming Your Spaces
        </Link>
        <Link to="/gallery" className="btn-secondary px-6 text-base">
          View Gallery
        </Link>
      </div>
    </div>
  );
}
