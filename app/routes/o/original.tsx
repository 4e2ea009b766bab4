import { getDeps } from "@workers/http/context";
import { ALTERED_WITHDRAWN, PUBLIC_CACHE, resolveLink } from "@workers/services/mls/original-page";
import { data } from "react-router";
import { errorText } from "~/lib/error-text";
import type { Route } from "./+types/original";

// The public page of an original and its altered versions (/o/<token>), for buyers who scan the label's QR code or
// follow a caption's link (docs/decisions/0110-mls-disclosure-and-original-pages.md, 0170-mls-profiles.md). It
// shows the unaltered original, then every altered version of the photo with its kind and date, the one the link
// was made for first, and an optional listing address: nothing else about the agent. It loads no JavaScript bundle
// (a phone gets HTML with its stylesheet, the site's small menu script and thumbnails, the full pictures one tap
// away) and works without JavaScript. A closed page answers 410.

export const handle = { hydrate: false };

const KIND: Record<string, string> = {
  stage: "virtually staged: furniture and decor were added by software",
  sky: "digitally altered: the sky was replaced by software",
  removal: "digitally altered: furniture was removed by software",
};

/** A withdrawn link (410) and a link that never existed (404) say so; any other refusal is the site's own. */
const LINK_REFUSALS = {
  410: { title: "This link was withdrawn", text: "The person who shared this photo withdrew its page." },
  404: { title: "This link does not exist", text: "Check the address: it may have been mistyped." },
};

export const meta: Route.MetaFunction = ({ error }) => [
  { title: error ? `${errorText(error, LINK_REFUSALS).title} · Stagewise` : "Original photo and its altered versions" },
  { name: "robots", content: "noindex" },
];

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function loader({ params, context }: Route.LoaderArgs) {
  const { db, clock } = getDeps(context);
  const found = await resolveLink(db, params.token ?? "", clock());
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
      listingAddress: p.listingAddress,
      original: { width: p.original.width, height: p.original.height },
      versions: p.versions.map((v) => ({
        id: v.id,
        kind: v.kindName,
        says: KIND[v.kind] ?? "digitally altered by software",
        date: day(v.createdAt),
        width: v.width,
        height: v.height,
        linked: v.linked,
        // The one the link was made for has its own short address.
        path: v.linked ? "staged" : `versions/${v.id}`,
      })),
      // Returned by its owner (ADR 0263): the disclosure stays, the altered photo is withdrawn.
      returned: p.returned
        ? {
            says: KIND[p.returned.kind] ?? "digitally altered by software",
            date: day(p.returned.createdAt),
            text: ALTERED_WITHDRAWN,
          }
        : null,
    },
    { headers: { "Cache-Control": PUBLIC_CACHE, Vary: "Cookie", ETag: p.etag } },
  );
}

export function headers({ loaderHeaders }: Route.HeadersArgs) {
  return loaderHeaders;
}

/** A picture as a thumbnail (400 px) or full size, whichever the screen needs; a tap opens the full picture. */
function Picture(props: { src: string; width: number; height: number; alt: string; eager?: boolean }) {
  return (
    <a href={props.src} className="block">
      <img
        src={`${props.src}?size=thumb`}
        srcSet={`${props.src}?size=thumb 400w, ${props.src} ${props.width}w`}
        sizes="(min-width: 640px) 50vw, 100vw"
        width={props.width}
        height={props.height}
        alt={props.alt}
        className="h-auto w-full rounded-lg bg-slate-100"
        loading={props.eager ? "eager" : "lazy"}
        decoding="async"
      />
    </a>
  );
}

export default function OriginalPage({ loaderData }: Route.ComponentProps) {
  const d = loaderData;
  const base = `/api/o/${d.token}`;
  const [first] = d.versions;
  const advertised = d.returned ?? (first?.linked ? first : null);
  return (
    <div className="container-page max-w-4xl py-6 sm:py-10">
      <h1 className="text-2xl font-bold tracking-tight sm:text-3xl">Original photo and its altered versions</h1>
      {d.listingAddress ? (
        <p className="mt-1 text-muted" data-testid="listing-address">
          {d.listingAddress}
        </p>
      ) : null}
      {advertised ? (
        <p
          className="mt-4 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-slate-900"
          data-testid="disclosure"
        >
          <strong>Disclosure:</strong> the advertised photo was {advertised.says} on{" "}
          <time dateTime={advertised.date}>{advertised.date}</time>. The first picture below is the unaltered original.
          Furniture, decor and skies shown in altered versions are not part of the property.
        </p>
      ) : null}
      {d.returned ? (
        <p
          className="mt-2 rounded-lg border border-slate-300 p-3 text-sm text-slate-900"
          data-testid="altered-withdrawn"
        >
          {d.returned.text}
        </p>
      ) : null}
      <div className="mt-5 grid gap-4 sm:grid-cols-2">
        <figure data-testid="original">
          <Picture
            src={`${base}/original`}
            width={d.original.width}
            height={d.original.height}
            alt="The unaltered original"
            eager
          />
          <figcaption className="mt-1 text-sm font-semibold">Original (unaltered)</figcaption>
        </figure>
        {d.versions.map((v) => (
          <figure key={v.id} data-testid="altered-version">
            <Picture
              src={`${base}/${v.path}`}
              width={v.width}
              height={v.height}
              alt={`${v.kind}, ${v.date}`}
              eager={v.linked}
            />
            <figcaption className="mt-1 text-sm text-muted">
              {v.kind}, <time dateTime={v.date}>{v.date}</time>
              {v.linked ? " (the advertised photo)" : ""}
            </figcaption>
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
