import { getUser } from "@workers/http/auth";
import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { CONTACT_RULE, submitContactMessage } from "@workers/services/contact";
import { Link, useSearchParams } from "react-router";
import { CompareSlider } from "~/components/compare-slider";
import { ContactDialog } from "~/components/contact-dialog";
import { FEATURED_ITEMS, GALLERY_ITEMS } from "~/lib/gallery";
import { getStartedPath } from "~/lib/get-started";
import { useRootData } from "~/root";
import type { Route } from "./+types/gallery";

export const meta: Route.MetaFunction = () => [
  { title: "Gallery: before and after virtual staging · Stagewise" },
  {
    name: "description",
    content: "Empty rooms and the same rooms virtually staged: bedrooms, living rooms, dining rooms and kitchens.",
  },
];

// Passes the action's headers (Retry-After on a 429) to the page's response: React Router keeps only cookies otherwise.
export const headers: Route.HeadersFunction = ({ actionHeaders }) => actionHeaders;

export async function action({ request, context }: Route.ActionArgs) {
  const { env, db, deps } = context.get(requestContext);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const result = await submitContactMessage(raw.fields, {
    db,
    mailer: deps.mailer,
    supportEmail: env.SUPPORT_EMAIL,
    rateLimit: (keys) => deps.rateLimit(CONTACT_RULE, keys),
    ip: deps.ip,
    userId: getUser(context)?.id ?? null,
  });
  return result.ok ? result : failureData(result);
}

const SMALL_SIZES = "(min-width: 1152px) 352px, (min-width: 768px) calc((100vw - 5rem) / 3), calc(100vw - 2rem)";
const LARGE_SIZES = "(min-width: 1152px) 544px, (min-width: 768px) calc((100vw - 4rem) / 2), calc(100vw - 2rem)";

export default function Gallery({ actionData }: Route.ComponentProps) {
  const [params] = useSearchParams();
  const root = useRootData();
  return (
    <>
      <section className="bg-gradient-to-b from-brand-50 to-white">
        <div className="container-page py-14 text-center sm:py-20">
          <h1 className="text-4xl font-extrabold tracking-tight sm:text-5xl">Transform Spaces Virtually</h1>
          <p className="mx-auto mt-4 max-w-2xl text-lg text-muted">
            Empty rooms and the same rooms virtually staged. Drag a handle, or focus it and use the arrow keys, to see
            what a buyer sees after staging.
          </p>
        </div>
      </section>

      <section className="container-page py-12" aria-labelledby="gallery-title">
        <h2 id="gallery-title" className="text-2xl font-bold tracking-tight sm:text-3xl">
          Before &amp; After Gallery
        </h2>
        <p className="mt-2 text-sm text-muted">
          The examples on this page are illustrations; your results are your own photos, staged.
        </p>
        <ul className="mt-8 grid gap-8 md:grid-cols-3">
          {GALLERY_ITEMS.map((item, i) => (
            <li key={item.id}>
              <CompareSlider item={item} height={300} sizes={SMALL_SIZES} eager={i === 0} />
              <h3 className="mt-3 font-semibold">{item.title}</h3>
            </li>
          ))}
        </ul>
      </section>

      <section className="bg-slate-50 py-14" aria-labelledby="video-title">
        <div className="container-page grid items-center gap-8 md:grid-cols-2">
          <div>
            <h2 id="video-title" className="text-2xl font-bold tracking-tight sm:text-3xl">
              See Virtual Staging in Action
            </h2>
            <p className="mt-4 text-muted">
              A short video that walks through staging a room from upload to download is coming soon. Until then, the
              examples on this page show what staging does, and your first staged photo usually takes under a minute.
            </p>
            <Link to={getStartedPath(root?.user)} className="btn-primary mt-6">
              Try it on your own photo
            </Link>
          </div>
          <div className="flex aspect-video items-center justify-center rounded-2xl border border-dashed border-slate-300 bg-white text-center">
            <p className="px-6 font-semibold text-muted">Video coming soon</p>
          </div>
        </div>
      </section>

      {/* Bottom padding keeps the floating Contact Us button off the last pictures. */}
      <section className="container-page pt-14 pb-28" aria-labelledby="featured-title">
        <h2 id="featured-title" className="text-2xl font-bold tracking-tight sm:text-3xl">
          Featured Transformations
        </h2>
        <ul className="mt-8 grid gap-8 md:grid-cols-2">
          {FEATURED_ITEMS.map((item) => (
            <li key={item.id}>
              <CompareSlider item={item} height={400} sizes={LARGE_SIZES} />
              <h3 className="mt-3 font-semibold">{item.title}</h3>
            </li>
          ))}
        </ul>
      </section>

      <ContactDialog
        initiallyOpen={params.get("contact") === "1"}
        result={actionData}
        supportEmail={root?.supportEmail ?? ""}
      />
    </>
  );
}
