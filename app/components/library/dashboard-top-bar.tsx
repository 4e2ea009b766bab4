import { Form, Link } from "react-router";
import { BrandLink, SkipLink } from "~/components/brand";

/**
 * The dashboard's own top bar: brand, billing, settings (API keys) and sign-out; on a phone also the
 * balance, compact (the desktop shows it in the plan card instead).
 */
export function DashboardTopBar({ credits }: { credits?: number }) {
  return (
    <header className="sticky top-0 z-40 border-b border-line bg-white/95 backdrop-blur">
      <SkipLink />
      <nav aria-label="Account" className="container-page flex h-16 items-center justify-between">
        <BrandLink />
        <div className="flex items-center gap-0.5 sm:gap-1">
          {credits === undefined ? null : (
            <Link
              to="/plans"
              className="mr-1 whitespace-nowrap rounded-full bg-brand-50 px-2.5 py-1.5 text-sm font-semibold text-brand-700 lg:hidden"
              data-testid="topbar-credits"
              aria-label={`${credits} ${credits === 1 ? "credit" : "credits"} left. Plans`}
            >
              {credits} {credits === 1 ? "credit" : "credits"}
            </Link>
          )}
          <Link to="/billing" className="btn-ghost px-2 sm:px-3" aria-label="Billing" title="Billing">
            <svg
              aria-hidden="true"
              viewBox="0 0 24 24"
              className="h-6 w-6"
              fill="none"
              stroke="currentColor"
              strokeWidth="2"
            >
              <rect x="3" y="5" width="18" height="14" rx="2" />
              <path d="M3 10h18M7 15h4" />
            </svg>
          </Link>
          <Link to="/settings" className="btn-ghost px-2 sm:px-3" aria-label="Settings and API keys" title="Settings">
            <svg
              aria-hidden="true"
              viewBox="0 0 24 24"
              className="h-6 w-6"
              fill="none"
              stroke="currentColor"
              strokeWidth="2"
            >
              <circle cx="8" cy="15" r="4" />
              <path d="M11 12l9-9M16 7l3 3M14 9l2 2" />
            </svg>
          </Link>
          <Form method="post" action="/logout">
            <button type="submit" className="btn-ghost px-2 sm:px-3" aria-label="Log out" title="Log out">
              <svg
                aria-hidden="true"
                viewBox="0 0 24 24"
                className="h-6 w-6"
                fill="none"
                stroke="currentColor"
                strokeWidth="2"
              >
                <path d="M15 4h3a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2h-3M10 16l-4-4 4-4M6 12h10" />
              </svg>
            </button>
          </Form>
        </div>
      </nav>
    </header>
  );
}
