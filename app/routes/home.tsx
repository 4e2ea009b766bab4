import { Link } from "react-router";
import { useRootData } from "../root";
import type { Route } from "./+types/home";

export const meta: Route.MetaFunction = () => [
  { title: "Stagewise: virtual staging for real-estate photos" },
  { name: "description", content: "Professional virtual staging powered by AI. Transform any space in seconds." },
];

export default function Home() {
  const data = useRootData();
  const user = data?.user;
  const start = user && (user.hasPlan || user.credits > 0) ? "/dashboard" : "/auth";
  return (
    <section className="bg-gradient-to-b from-brand-50 to-white">
      <div className="container-page py-16 sm:py-24">
        <p className="inline-flex items-center gap-2 rounded-full bg-white px-3 py-1 text-sm font-medium shadow-sm">
          <span aria-hidden="true" className="text-accent-500">
            ★★★★★
          </span>{" "}
          Trusted by realtors
        </p>
        <h1 className="mt-6 max-w-3xl text-4xl font-extrabold tracking-tight sm:text-6xl">
          Transform Spaces Instantly
        </h1>
        <p className="mt-4 max-w-2xl text-lg text-muted">
          Professional virtual staging powered by AI. Transform any space in seconds.
        </p>
        <div className="mt-8 flex flex-wrap gap-3">
          <Link to={start} className="btn-primary px-6 text-base">
            Start Staging Now
          </Link>
          <Link to="/#before-after-gallery" className="btn-secondary px-6 text-base">
            View Gallery
          </Link>
        </div>
      </div>
    </section>
  );
}
