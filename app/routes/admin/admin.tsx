import { adminPageTakesNoForm, requireAdmin } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { listUsers, SORT_KEYS, type SortKey } from "@workers/services/admin";
import { useEffect } from "react";
import { Form, Link, useRevalidator, useSearchParams } from "react-router";
import { formatDate } from "~/lib/format";
import type { Route } from "./+types/admin";

export const meta: Route.MetaFunction = () => [{ title: "Admin · Users" }];

export const action = adminPageTakesNoForm;

export async function loader({ request, context }: Route.LoaderArgs) {
  requireAdmin(context);
  const url = new URL(request.url);
  const sortParam = url.searchParams.get("sort");
  const sort: SortKey = (SORT_KEYS as readonly string[]).includes(sortParam ?? "") ? (sortParam as SortKey) : "created";
  const dir = url.searchParams.get("dir") === "asc" ? "asc" : "desc";
  const q = (url.searchParams.get("q") ?? "").slice(0, 254);
  const cursor = url.searchParams.get("cursor");
  const { db } = context.get(requestContext);
  const page = await listUsers(db, { q, sort, dir, cursor });
  return { ...page, q, sort, dir };
}

const COLUMNS: { label: string; sort?: SortKey }[] = [
  { label: "Email", sort: "email" },
  { label: "Plan" },
  { label: "Credits", sort: "credits" },
  { label: "Verified" },
  { label: "Signed up", sort: "created" },
  { label: "Last active", sort: "active" },
];

/** Balances change from payments, jobs and other admins: refresh the rows while the page is visible. */
function useLiveRows(ms: number) {
  const { revalidate, state } = useRevalidator();
  useEffect(() => {
    const id = setInterval(() => {
      if (document.visibilityState === "visible" && state === "idle") void revalidate();
    }, ms);
    return () => clearInterval(id);
  }, [ms, revalidate, state]);
}

export default function AdminUsers({ loaderData }: Route.ComponentProps) {
  const { rows, nextCursor, q, sort, dir } = loaderData;
  const [params] = useSearchParams();
  useLiveRows(3000);
  const sortHref = (key: SortKey) => {
    const next = new URLSearchParams(params);
    next.set("sort", key);
    next.set("dir", sort === key && dir === "desc" ? "asc" : "desc");
    next.delete("cursor");
    return `?${next}`;
  };
  const nextHref = () => {
    const next = new URLSearchParams(params);
    if (nextCursor) next.set("cursor", nextCursor);
    return `?${next}`;
  };
  return (
    <div className="container-page py-8">
      <h1 className="text-2xl font-bold">Admin</h1>
      <p className="mt-1 text-sm text-muted">
        Every user, their plan and credits. Rows refresh on their own.{" "}
        <Link to="/admin/operations" className="text-brand-700 underline">
          Operations
        </Link>{" "}
        ·{" "}
        <Link to="/admin/teams" className="text-brand-700 underline">
          Teams
        </Link>
      </p>
      <Form method="get" className="mt-6 flex max-w-lg gap-2" role="search">
        <label htmlFor="q" className="sr-only">
          Search by e-mail
        </label>
        <input
          id="q"
          name="q"
          type="search"
          defaultValue={q}
          placeholder="Search by e-mail (starts with)"
          className="input"
        />
        <input type="hidden" name="sort" value={sort} />
        <input type="hidden" name="dir" value={dir} />
        <button type="submit" className="btn-primary">
          Search
        </button>
      </Form>
      <div className="mt-6 overflow-x-auto rounded-2xl border border-line">
        <table className="w-full min-w-[44rem] text-left text-sm">
          <thead className="bg-slate-50 text-xs uppercase tracking-wide text-muted">
            <tr>
              {COLUMNS.map((c) => (
                <th
                  key={c.label}
                  scope="col"
                  className="px-4 py-3"
                  aria-sort={c.sort === sort ? (dir === "asc" ? "ascending" : "descending") : undefined}
                >
                  {c.sort ? (
                    <Link to={sortHref(c.sort)} className="hover:text-ink">
                      {c.label}
                      {c.sort === sort ? (dir === "asc" ? " ↑" : " ↓") : ""}
                    </Link>
                  ) : (
                    c.label
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody className="divide-y divide-line">
            {rows.map((u) => (
              <tr key={u.id} data-testid="admin-user-row" data-email={u.email}>
                <td className="px-4 py-3">
                  <Link to={`/admin/users/${u.id}`} className="font-medium text-brand-700 underline">
                    {u.email}
                  </Link>
                  {u.role === "admin" ? (
                    <span className="ml-2 rounded bg-brand-50 px-1.5 py-0.5 text-xs text-brand-700">admin</span>
                  ) : null}
                  {u.deletedAt !== null ? (
                    <span className="ml-2 rounded bg-red-50 px-1.5 py-0.5 text-xs text-red-700" data-testid="deleted">
                      deleted
                    </span>
                  ) : null}
                </td>
                <td className="px-4 py-3">{u.plan ?? "—"}</td>
                <td className="px-4 py-3 tabular-nums" data-testid="admin-credits">
                  {u.credits}
                </td>
                <td className="px-4 py-3">{u.verified ? "Yes" : "No"}</td>
                <td className="px-4 py-3">{formatDate(u.createdAt)}</td>
                <td className="px-4 py-3">{formatDate(u.lastActiveAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {rows.length === 0 ? <p className="p-6 text-center text-muted">No users match.</p> : null}
      </div>
      <div className="mt-4 flex justify-end gap-2">
        {params.get("cursor") ? (
          <Link to={`?${new URLSearchParams({ q, sort, dir })}`} className="btn-secondary">
            First page
          </Link>
        ) : null}
        {nextCursor ? (
          <Link to={nextHref()} className="btn-secondary">
            Next page
          </Link>
        ) : null}
      </div>
    </div>
  );
}
