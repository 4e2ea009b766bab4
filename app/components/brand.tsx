import { Link } from "react-router";

/** The first focusable element of every page: jumps past the navigation. */
export function SkipLink() {
  return (
    <a
      href="#main"
      className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:rounded focus:bg-white focus:px-3 focus:py-2"
    >
      Skip to content
    </a>
  );
}

/** The logo and name, linking home. */
/** The brand and home link; `compact` shows only the mark on a phone (the name stays for screen readers). */
export function BrandLink({ compact = false }: { compact?: boolean }) {
  return (
    <Link to="/" className="flex items-center gap-2 text-lg font-bold tracking-tight text-ink" data-testid="brand">
      <svg aria-hidden="true" viewBox="0 0 24 24" className="h-7 w-7 text-brand-600" fill="currentColor">
        <path d="M12 3 2 11h3v9h6v-6h2v6h6v-9h3z" />
      </svg>
      <span className={compact ? "sr-only sm:not-sr-only" : undefined}>Stagewise</span>
    </Link>
  );
}
