import { getDeps } from "@workers/http/context";
import { PUBLIC_CACHE, resolveLink } from "@workers/services/mls/links";
import { data } from "react-router";
import { ComparePictures } from "~/components/compare-slider";
import { errorText } from "~/lib/error-text";
import type { Route } from "./+types/original";

// The public page of an original next to its staged version (/o/<token>), for
// buyers who scan the label's QR code or follow the listing's link
// (docs/decisions/0110-mls-disclosure-and-original-pages.md). It shows the two
// pictures, the disclosure, the date and an optional listing address: nothing
// else about the agent. A revoked link answers 410 at once.

const KIND: Record<string, string> = {
  stage: "virtually staged (furniture and decor added by software)",
  sky: "edited: the sky was replaced by software",
  removal: "edited: furniture was removed by software",
};

/** A withdrawn link (410) and a link that never existed (404) say so; any other refusal is the site's own. */
const LINK_REFUSALS = {
  410: { title: "This link was withdrawn", text: "The person who shared this photo withdrew its page." },
  404: { title: "This link does not exist", text: "Check the address: it may have been mistyped." },
};

export const meta: Route.MetaFunction = ({ error }) => [
  { title: error ? `${errorText(error, LINK_REFUSALS).title} · Stagewise` : "Original and virtually staged photo" },
  { name: "robots", content: "noindex" },
];

export async function loader({ params, context }: Route.LoaderArgs) {
  const { db } = getDeps(context);
  const found = await resolveLink(db, params.token ?? "");
  if (!found.ok) {
    throw data(
      { message: found.error },
      { status: found.code === "gone" ? 410 : 404, headers: { "Cache-Control": "no-store" } },
    );
  }
  const p = found.page;
  return data(
    {
      token: p.token,
      stagedAt: new Date(p.stagedAt).toISOString().slice(0, 10),
      disclosure: KIND[p.kind] ?? "edited by software",
      width: p.width,
      height: p.height,
      listingAddress: p.listingAddress,
    },
    { headers: { "Cache-Control": PUBLIC_CACHE, Vary: "Cookie", ETag: p.etag } },
  );
}

export function headers({ loaderHeaders }: Route.HeadersArgs) {
  return loaderHeaders;
}

export default function OriginalPage({ loaderData }: Route.ComponentProps) {
  const d = loaderData;
  const base = `/api/o/${d.token}`;
  return (
    <div className="container-page max-w-4xl py-6 sm:py-10">
      <h1 className="text-2xl font-bold tracking-tight sm:text-3xl">Original photo and virtually staged version</h1>
      {d.listingAddress ? (
        <p className="mt-1 text-muted" data-testid="listing-address">
          {d.listingAddress}
        </p>
      ) : null}
      <p
        className="mt-4 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-slate-900"
        data-testid="disclosure"
      >
        <strong>Disclosure:</strong> the photo on the right was {d.disclosure} on{" "}
        <time dateTime={d.stagedAt}>{d.stagedAt}</time>. The photo on the left is the unaltered original. Furniture and
        decor shown in the staged version are not part of the property.
      </p>
      <div className="mt-5">
        <ComparePictures
          before={`${base}/original`}
          after={`${base}/staged`}
          width={d.width}
          height={d.height}
          title="This room"
        />
      </div>
      <div className="mt-5 grid gap-4 sm:grid-cols-2">
        {[
          { which: "original", alt: "The unaltered original", caption: "Original (unaltered)" },
          { which: "staged", alt: "The virtually staged version", caption: `Virtually staged, ${d.stagedAt}` },
        ].map((f) => (
          <figure key={f.which}>
            <img
              src={`${base}/${f.which}`}
              width={d.width}
              height={d.height}
              alt={f.alt}
              className="h-auto w-full rounded-lg"
              loading="lazy"
              decoding="async"
            />
            <figcaption className="mt-1 text-sm text-muted">{f.caption}</figcaption>
          </figure>
        ))}
      </div>
    </div>
  );
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  const { label, title, text } = errorText(error, LINK_REFUSALS);
  return (
    <div className="container-page flex flex-1 flex-col items-center justify-center py-24 text-center">
      <p className="text-sm font-semibold text-brand-600">{label}</p>
      <h1 className="mt-2 text-3xl font-bold tracking-tight" data-testid="original-gone">
        {title}
      </h1>
      <p className="mt-4 max-w-md text-muted">{text}</p>
    </div>
  );
}
