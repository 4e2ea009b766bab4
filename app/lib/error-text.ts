import { isRouteErrorResponse } from "react-router";

/** What an error page says: the small label above its heading, the heading (also the page's title) and a line. */
export interface ErrorText {
  label: string;
  title: string;
  text: string;
  /** Nobody expected it (not a refusal of the request): worth logging. */
  unexpected: boolean;
}

/** A page's own words for a refusal it knows (the public original page's withdrawn link, say). */
export type Said = Pick<ErrorText, "title" | "text">;

const NOT_FOUND: Said = {
  title: "Page not found",
  text: "We could not find the page you asked for. It may have moved.",
};

/** A 4xx other than 404 (a POST to a page that takes none: 405) is the request's doing: nothing to try again. */
const REFUSED: Said = {
  title: "This request was not accepted",
  text: "This page does not take that kind of request, and nothing was changed. Go back and use the page itself.",
};

const UNEXPECTED: Said = {
  title: "Something went wrong",
  text: "An unexpected error stopped this page. Your photos and credits are safe. Please try again in a moment.",
};

/**
 * What the error page says. A refusal (any 4xx) is labelled with its status and said in the page's own words for
 * that status (`byStatus`), else as "not found" or "not accepted"; saying "something went wrong, try again in a
 * moment" would send the person back to the same refusal. Anything else is `unexpected`.
 */
export function errorText(error: unknown, byStatus: Partial<Record<number, Said>> = {}): ErrorText {
  if (isRouteErrorResponse(error) && error.status >= 400 && error.status < 500) {
    const said = byStatus[error.status] ?? (error.status === 404 ? NOT_FOUND : REFUSED);
    return { label: String(error.status), ...said, unexpected: false };
  }
  return { label: "Error", ...UNEXPECTED, unexpected: true };
}
