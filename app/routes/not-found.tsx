import { getUser, loginRedirect } from "@workers/http/auth";
import { data } from "react-router";
import type { Route } from "./+types/not-found";

// Any unknown address: a signed-out visitor is sent to /login (spec section 2),
// a signed-in one sees the 404 page.
export function loader({ request, context }: Route.LoaderArgs) {
  if (!getUser(context)) throw loginRedirect(request);
  throw data(null, { status: 404 });
}

export function action({ request, context }: Route.ActionArgs) {
  return loader({ request, context } as Route.LoaderArgs);
}

export default function NotFound() {
  return null;
}
