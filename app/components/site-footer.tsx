import { Link } from "react-router";
import { SectionLink } from "./section-link";

const linkClass = "hover:text-ink";

const SECTIONS = [
  ["features", "Features"],
  ["before-after-gallery", "Gallery"],
] as const;

const PAGES = [
  ["/plans", "Pricing"],
  ["/blog", "Blog"],
  ["/terms-of-service", "Terms of Service"],
  ["/privacy-policy", "Privacy Policy"],
  ["/refund-policy", "Refund Policy"],
] as const;

export function SiteFooter({ supportEmail }: { supportEmail: string }) {
  return (
    <footer className="border-t border-line bg-slate-50">
      <div className="container-page grid gap-8 py-10 sm:grid-cols-2">
        <div>
          <p className="text-lg font-bold">Stagewise</p>
          <p className="mt-2 max-w-sm text-sm text-muted">Virtual staging for real-estate photos, in seconds.</p>
          {supportEmail ? (
            <p className="mt-4 text-sm">
              Contact:{" "}
              <a className="font-medium text-brand-700 underline" href={`mailto:${supportEmail}`}>
                {supportEmail}
              </a>
            </p>
          ) : null}
        </div>
        <nav aria-label="Quick Links">
          <h2 className="text-sm font-semibold">Quick Links</h2>
          <ul className="mt-3 grid grid-cols-2 gap-2 text-sm text-muted">
            {/* On the landing page these scroll; elsewhere they go to / and scroll there. */}
            {SECTIONS.map(([section, label]) => (
              <li key={section}>
                <SectionLink className={linkClass} section={section}>
                  {label}
                </SectionLink>
              </li>
            ))}
            {PAGES.map(([to, label]) => (
              <li key={to}>
                <Link className={linkClass} to={to}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      </div>
      <p className="border-t border-line py-4 text-center text-xs text-muted">
        © {new Date().getFullYear()} Stagewise. All rights reserved.
      </p>
    </footer>
  );
}
