import { useEffect, useRef } from "react";
import { Form, Link, useLocation } from "react-router";
import { Icon } from "~/components/icons";
import { getStartedPath } from "~/lib/get-started";
import { BrandLink, SkipLink } from "./brand";
import { SectionLink } from "./section-link";

export interface NavUser {
  name: string;
  isAdmin: boolean;
  credits: number;
  hasPlan: boolean;
}

function NavItems({
  user,
  hinted,
  onMobile,
  onNavigate,
}: {
  user: NavUser | null;
  hinted?: boolean;
  onMobile?: boolean;
  onNavigate?: () => void;
}) {
  const item = onMobile
    ? "block rounded-lg px-3 py-3 text-base font-medium hover:bg-slate-100"
    : "rounded-lg px-3 py-2 text-sm font-medium text-muted hover:text-ink";
  return (
    <>
      <SectionLink section="features" className={item} onNavigate={onNavigate}>
        Features
      </SectionLink>
      <SectionLink section="before-after-gallery" className={item} onNavigate={onNavigate}>
        Gallery
      </SectionLink>
      <Link to="/plans" className={item}>
        Pricing
      </Link>
      {user?.isAdmin || (hinted && !user) ? (
        <Link to="/admin" className={item} {...hintedOnly(hinted && !user, "admin")}>
          Admin
        </Link>
      ) : null}
      {user || hinted ? (
        <Form
          method="post"
          action="/logout"
          className={onMobile ? "" : "inline"}
          {...hintedOnly(hinted && !user, "in")}
        >
          <button type="submit" className={`${item} w-full text-left`}>
            Logout
          </button>
        </Form>
      ) : null}
      {user ? null : (
        <Link to="/login" className={item} {...(hinted ? { "data-nav-only": "out" } : {})}>
          Login
        </Link>
      )}
      <Link to={getStartedPath(user)} className={onMobile ? "btn-primary mt-2 w-full" : "btn-primary ml-2"}>
        Get Started
      </Link>
    </>
  );
}

/**
 * A page prerendered into a static file (docs/decisions/0145) is the signed-out page for everyone. It carries the
 * signed-in items too, hidden; app/lib/islands.ts shows them when the browser holds the signed-in hint cookie.
 */
function hintedOnly(hinted: boolean | undefined, who: "in" | "admin") {
  return hinted ? { hidden: true, "data-nav-only": who } : {};
}

export function SiteNav({ user, hinted }: { user: NavUser | null; hinted?: boolean }) {
  const menu = useRef<HTMLDetailsElement>(null);
  const { pathname } = useLocation();
  const close = () => {
    if (menu.current) menu.current.open = false;
  };
  // A client-side navigation keeps the page, so the open menu has to be closed by hand.
  useEffect(close, [pathname]);
  return (
    <header className="sticky top-0 z-40 border-b border-line bg-white/95 backdrop-blur">
      <SkipLink />
      <nav aria-label="Main" className="container-page flex h-16 items-center justify-between">
        <BrandLink />
        <div className="hidden items-center md:flex">
          <NavItems user={user} hinted={hinted} />
        </div>
        {/* A <details> menu opens without JavaScript, so it works before the page hydrates. */}
        <details
          ref={menu}
          className="group relative md:hidden"
          data-menu
          onKeyDown={(e) => {
            if (e.key !== "Escape" || !menu.current?.open) return;
            close();
            menu.current.querySelector("summary")?.focus();
          }}
        >
          <summary className="btn-ghost list-none [&::-webkit-details-marker]:hidden" aria-label="Menu">
            <Icon name="menu" className="h-6 w-6 group-open:hidden" />
            <Icon name="x" className="hidden h-6 w-6 group-open:block" />
          </summary>
          <div
            className="absolute right-0 mt-2 w-64 rounded-2xl border border-line bg-white p-3 shadow-xl"
            data-testid="mobile-menu"
          >
            <NavItems user={user} hinted={hinted} onMobile onNavigate={close} />
          </div>
        </details>
      </nav>
    </header>
  );
}
