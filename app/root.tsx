import { authMiddleware, getUser } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { useEffect } from "react";
import { Links, Meta, Outlet, Scripts, ScrollRestoration, useMatches, useRouteLoaderData } from "react-router";
import { DashboardTopBar } from "~/components/library/dashboard-top-bar";
import { SiteFooter } from "~/components/site-footer";
import { SiteNav } from "~/components/site-nav";
import { errorText } from "~/lib/error-text";
import { InlineStyles } from "~/lib/inline-css";
import { landingIslandsScript } from "~/lib/islands";
import { useNonce } from "~/lib/nonce";
import { isAdmin } from "~/shared/access";
import type { Route } from "./+types/root";

export const middleware: Route.MiddlewareFunction[] = [authMiddleware];

export function loader({ context }: Route.LoaderArgs) {
  const user = getUser(context);
  const { env } = context.get(requestContext);
  return {
    user: user && {
      name: user.name,
      email: user.email,
      isAdmin: isAdmin(user),
      credits: user.credits,
      hasPlan: user.plan !== null,
    },
    supportEmail: env.SUPPORT_EMAIL,
  };
}

export type RootData = Awaited<ReturnType<typeof loader>>;

export function useRootData(): RootData | undefined {
  return useRouteLoaderData<typeof loader>("root");
}

/**
 * An error page's title (a route that defines its own title is not rendered when its loader throws: the root's
 * boundary is, with the root's meta). Every other page names itself.
 */
export const meta: Route.MetaFunction = ({ error }) =>
  error ? [{ title: `${errorText(error).title} · Stagewise` }] : [];

export const links: Route.LinksFunction = () => [{ rel: "icon", href: "/favicon.svg", type: "image/svg+xml" }];

/**
 * Whether this document is served without React in the browser (route handle `{ hydrate: false }`, the landing
 * page): decided on the server only. A hydrated page that later navigates to such a route renders it with React as
 * usual. docs/decisions/0136-landing-page-islands.md
 */
function useStaticDocument(): boolean {
  const matches = useMatches();
  return import.meta.env.SSR && matches.some((m) => (m.handle as { hydrate?: boolean } | undefined)?.hydrate === false);
}

export function Layout({ children }: { children: React.ReactNode }) {
  const nonce = useNonce();
  const staticDocument = useStaticDocument();
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="theme-color" content="#1d40b0" />
        <Meta />
        {/* Stylesheets come from our origin and need no nonce; an empty one keeps hydration in step. */}
        <Links nonce="" />
        <InlineStyles />
      </head>
      <body className="flex min-h-dvh flex-col bg-white font-sans antialiased">
        {children}
        {/* SSR first: the browser's build drops this branch and, with it, the landing page's script. */}
        {import.meta.env.SSR && staticDocument ? (
          // Our own function's source (app/lib/islands.ts): no input of anyone's in it.
          <script nonce={nonce} dangerouslySetInnerHTML={{ __html: landingIslandsScript() }} />
        ) : (
          <>
            <ScrollRestoration nonce={nonce} />
            <Scripts nonce={nonce} />
          </>
        )}
      </body>
    </html>
  );
}

function useHydratedMarker() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
}

/** Whether the current page draws its own chrome (route handle `{ bareLayout: true }`, e.g. /dashboard). */
function useBareLayout(): boolean {
  return useMatches().some((m) => (m.handle as { bareLayout?: boolean } | undefined)?.bareLayout === true);
}

/**
 * Whether the current page is a signed-in page that shares the app's frame (route handle `{ appFrame: true }`: the
 * batch pages, settings, billing, the developers' page): the app's header with the balance when someone is signed in.
 */
function useAppFrame(): boolean {
  return useMatches().some((m) => (m.handle as { appFrame?: boolean } | undefined)?.appFrame === true);
}

export default function App() {
  useHydratedMarker();
  const data = useRootData();
  const staticDocument = useStaticDocument();
  const appFrame = useAppFrame();
  if (useBareLayout()) return <Outlet />;
  if (appFrame && data?.user) {
    return (
      <>
        <DashboardTopBar credits={data.user.credits} framed />
        <main id="main" className="flex-1">
          <Outlet />
        </main>
        <SiteFooter supportEmail={data.supportEmail} />
      </>
    );
  }
  return (
    <>
      <SiteNav user={data?.user ?? null} hinted={staticDocument} />
      <main id="main" className="flex-1">
        <Outlet />
      </main>
      <SiteFooter supportEmail={data?.supportEmail ?? ""} />
    </>
  );
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  useHydratedMarker();
  const { label, title, text, unexpected } = errorText(error);
  // Only what nobody expected is logged: a refused request (any 4xx) is the request's doing.
  useEffect(() => {
    if (unexpected) console.error(error);
  }, [error, unexpected]);
  return (
    <>
      <SiteNav user={null} />
      <main id="main" className="container-page flex flex-1 flex-col items-center justify-center py-24 text-center">
        <p className="text-sm font-semibold text-brand-600">{label}</p>
        <h1 className="mt-2 text-3xl font-bold tracking-tight sm:text-4xl">{title}</h1>
        <p className="mt-4 max-w-md text-muted">{text}</p>
        <a href="/" className="btn-primary mt-8">
          Back to home
        </a>
      </main>
    </>
  );
}
