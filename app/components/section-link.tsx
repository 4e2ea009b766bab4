import type { ReactNode } from "react";
import { useLocation, useNavigate } from "react-router";
import { isLandingPath, type LandingSection, scrollToSection } from "~/lib/get-started";

/**
 * A link to a landing-page section. On the landing page it scrolls there; on
 * any other page it goes to / carrying `{ scrollTo }` router state, and the
 * landing page scrolls once it renders. Without JavaScript it is a plain
 * /#section link, which the browser follows by itself.
 */
export function SectionLink({
  section,
  className,
  children,
  onNavigate,
}: {
  section: LandingSection;
  className?: string;
  children: ReactNode;
  onNavigate?: () => void;
}) {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  return (
    <a
      href={`/#${section}`}
      className={className}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        onNavigate?.();
        if (isLandingPath(pathname)) scrollToSection(section);
        else navigate("/", { state: { scrollTo: section } });
      }}
    >
      {children}
    </a>
  );
}
