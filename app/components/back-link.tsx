import { Link } from "react-router";
import { Icon } from "~/components/icons";

/** The Back / Go Back button of the article and legal pages: always to the landing page. */
export function BackLink({ label = "Back" }: { label?: string }) {
  return (
    <Link to="/" className="btn-secondary" data-testid="back-link">
      <Icon name="back" className="h-4 w-4" />
      {label}
    </Link>
  );
}
