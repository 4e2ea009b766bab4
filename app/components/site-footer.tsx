import { Link } from "react-router";
import { SectionLink } from "./section-link";

const linkClass = "hover:text-ink";

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
            <li>
              {/* On the landing page these scroll; elsewhere they go to / and scroll there. */}
              <SectionLink className={linkClass} section="features">
                Features
              </SectionLink>
            </li>
            <li>
              <SectionLink className={linkClass} section="before-after-gallery">
                Gallery
              </SectionLink>
            </li>
            <li>
              <Link className={linkClass} to="/plans">
                Pricing
              </Link>
            </li>
            <li>
              <Link className={linkClass} to="/blog">
                Blog
              </Link>
            </li>
            <li>
              <Link className={linkClass} to="/terms-of-service">
                Terms of Service
              </Link>
            </li>
            <li>
              <Link className={linkClass} to="/privacy-policy">
                Privacy Policy
              </Link>
            </li>
            <li>
              <Link className={linkClass} to="/refund-policy">
                Refund Policy
              </Link>
            </li>
          </ul>
        </nav>
      </div>
      <p className="border-t border-line py-4 text-center text-xs text-muted">
        © {new Date().getFullYear()} Stagewise. All rights reserved.
      </p>
    </footer>
  );
}
