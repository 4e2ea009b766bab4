import { canStage } from "~/shared/access";

/** Where 'Start Staging Now' and 'Get Started' lead: the app for someone who can stage, else sign-up. */
export function getStartedPath(user: { hasPlan: boolean; credits: number } | null | undefined): string {
  return user && canStage(user) ? "/dashboard" : "/auth";
}

/** Sections of the landing page that links elsewhere on the site scroll to. */
export type LandingSection = "features" | "before-after-gallery";

export function isLandingPath(pathname: string): boolean {
  return pathname === "/" || pathname === "/landing";
}

/** The section a navigation asked the landing page to scroll to (router state `{ scrollTo }`), if it is one. */
export function scrollTarget(state: unknown): LandingSection | null {
  const target = (state as { scrollTo?: unknown } | null)?.scrollTo;
  return target === "features" || target === "before-after-gallery" ? target : null;
}

export function scrollToSection(id: string): boolean {
  const el = document.getElementById(id);
  if (!el) return false;
  const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  el.scrollIntoView({ behavior: reduce ? "auto" : "smooth", block: "start" });
  return true;
}
