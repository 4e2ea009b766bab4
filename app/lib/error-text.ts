import { isRouteErrorResponse } from "react-router";

/** What an error page says: the small label above its heading, the heading (also the page's title) and a line. */
export interface ErrorText {
  label: string;
  title: string;
  text: string;
  /** Nobody expected it (not a refusal of the request): worth logging. */
  unexpected: boolean;
}

/**
 * What the error page says. A 4xx other than 404 (a POST to a page that takes none: 405) is the request's doing:
 * saying "something went wrong, try again in a moment" would send the person back to the same refusal. Only the
 * last kind ("Error") is `unexpected`.
 */
export function errorText(error: unknown): ErrorText {
  if (isRouteErrorResponse(error) && error.status === 404) {
    return {
      label: "404",
      title: "Page not found",
      text: "We could not find the page you asked for. It may have moved.",
      unexpected: false,
    };
  }
  if (isRouteErrorResponse(error) && error.status >= 400 && error.status < 500) {
    return {
      label: String(error.status),
      title: "This request was not accepted",
      text: "This page does not take that kind of request, and nothing was changed. Go back and use the page itself.",
      unexpected: false,
    };
  }
  return {
    label: "Error",
    title: "Something went wrong",
    text: "An unexpected error stopped this page. Your photos and credits are safe. Please try again in a moment.",
    unexpected: true,
  };
}
