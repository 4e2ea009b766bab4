import { Form, Link } from "react-router";
import { BrandLink, SkipLink } from "~/components/brand";
import { Icon } from "~/components/icons";

/**
 * The dashboard's own top bar: brand, billing, settings (API keys) and sign-out; on a phone also the
 * balance, compact (the desktop shows it in the plan card instead). `framed`: the header of every other signed-in
 * page (root's app frame), with the balance at every width and a link back to the library.
 */

/** Icon buttons narrow enough that the bar fits a 360 px phone with the balance in it. */
const ICON_BUTTON = "btn-ghost px-2 sm:px-3";

export function DashboardTopBar({ credits, framed = false }: { credits?: number; framed?: boolean }) {
  return (
    <header className="sticky top-0 z-40 border-b border-line bg-white/95 backdrop-blur">
      <SkipLink />
      <nav aria-label="Account" className="container-page flex h-16 items-center justify-between">
        <BrandLink compact />
        <div className="flex items-center sm:gap-1">
          {/* Another signed-in page (root's app frame): the way back to the library. */}
          {framed ? (
            <Link to="/dashboard" className="btn-ghost px-2 text-sm sm:px-3" data-testid="topbar-library">
              Library
            </Link>
          ) : null}
          {credits === undefined ? null : (
            <Link
              to="/plans"
              className={`mr-1 whitespace-nowrap rounded-full bg-brand-50 px-3 py-1.5 text-sm font-semibold text-brand-700 ${framed ? "" : "lg:hidden"}`}
              data-testid="topbar-credits"
              aria-label={`${credits} ${credits === 1 ? "credit" : "credits"} left. Plans`}
            >
              {credits} {credits === 1 ? "credit" : "credits"}
            </Link>
          )}
          <Link to="/billing" className={ICON_BUTTON} aria-label="Billing" title="Billing">
            <Icon name="card" className="h-6 w-6" />
          </Link>
          <Link to="/settings" className={ICON_BUTTON} aria-label="Settings and API keys" title="Settings">
            <Icon name="key" className="h-6 w-6" />
          </Link>
          <Form method="post" action="/logout">
            <button type="submit" className={ICON_BUTTON} aria-label="Log out" title="Log out">
              <Icon name="logout" className="h-6 w-6" />
            </button>
          </Form>
        </div>
      </nav>
    </header>
  );
}
