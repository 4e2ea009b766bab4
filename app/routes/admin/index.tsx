import { requireAdmin } from "../../lib/auth.server";
import type { Route } from "./+types/index";

export const meta: Route.MetaFunction = () => [{ title: "Admin · Stagewise" }, { name: "robots", content: "noindex" }];

// Admins only; everyone else gets the 404 page, as if it did not exist.
// The admin issue fills this page with the users table.
export function loader({ context }: Route.LoaderArgs) {
  requireAdmin(context);
  return null;
}

export default function Admin() {
  return (
    <div className="container-page py-10">
      <h1 className="text-2xl font-bold tracking-tight">Admin</h1>
    </div>
  );
}
