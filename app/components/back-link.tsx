import { Link } from "react-router";

/** The Back / Go Back button of the article and legal pages: always to the landing page. */
export function BackLink({ label = "Back" }: { label?: string }) {
  return (
    <Link to="/" className="btn-secondary" data-testid="back-link">
      <svg aria-hidden="true" viewBox="0 0 20 20" className="h-4 w-4" fill="currentColor">
        <path d="M12.7 4.3a1 1 0 0 1 0 1.4L8.4 10l4.3 4.3a1 1 0 0 1-1.4 1.4l-5-5a1 1 0 0 1 0-1.4l5-5a1 1 0 0 1 1.4 0Z" />
      </svg>
      {label}
    </Link>
  );
}
