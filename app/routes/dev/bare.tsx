import { devPageTakesNoForm } from "@workers/http/auth";
import { devToolsEnabled, requestContext } from "@workers/http/context";
import { data } from "react-router";
import type { Route } from "./+types/bare";

// Benchmark baseline (dev only): a page with no data of its own, rendered
// through the same root layout, so `npm run bench` can show what our pages
// cost on top of React Router itself.
export function loader({ context }: Route.LoaderArgs) {
  if (!devToolsEnabled(context.get(requestContext).env)) throw data(null, { status: 404 });
  return null;
}

export const action = devPageTakesNoForm;

export default function Bare() {
  return <h1 className="container-page py-10 text-2xl font-bold">Bare page</h1>;
}
