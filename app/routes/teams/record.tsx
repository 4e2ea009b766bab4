import { requireUser } from "@workers/http/auth";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { readTeamRecord, viaName } from "@workers/services/teams/record";
import { Form, Link } from "react-router";
import type { Route } from "./+types/record";

// The broker's record (issue 47 item 5; docs/decisions/0285-the-brokers-record.md): every photo that left the team's
// listings in a range, per listing, for the owner and team admins (an agent 403, anyone else 404). Read only: nobody
// edits or deletes a row here.

export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Broker's record · Stagewise" }];

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const deps = getDeps(context);
  const url = new URL(request.url);
  const res = await readTeamRecord(deps.db, params.teamId.slice(0, 64), user.id, url.searchParams, {
    csv: false,
    now: deps.clock(),
  });
  if (!res.ok) throw failureData(res);
  return {
    team: res.team,
    range: res.range,
    folderId: res.folderId,
    listings: res.listings,
    rows: res.rows.map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString().replace("T", " ").slice(0, 16),
      listing: r.folderName,
      photo: r.photoName,
      version: r.versionKind ? `${r.versionKind} ${r.versionId}` : "original",
      via: viaName(r.via),
      member: r.memberName,
      profile: r.mlsProfile,
      disclosure: r.labelText ?? r.caption ?? "",
    })),
  };
}

export default function Record({ loaderData }: Route.ComponentProps) {
  const { team, range, folderId, listings, rows } = loaderData;
  const csv = new URLSearchParams({ from: range.from, to: range.to, ...(folderId ? { folder: folderId } : {}) });
  return (
    <main className="mx-auto max-w-5xl p-4">
      <p className="text-sm">
        <Link to={`/teams/${team.id}`} className="underline">
          {team.name}
        </Link>
      </p>
      <h1 className="text-2xl font-semibold">Broker's record</h1>
      <p className="mt-1 text-sm text-slate-700">
        Every photo that left the team's listings: downloads for MLS, listing packs, API downloads, original pages
        published or withdrawn. Nobody can edit or delete it: each entry is kept {team.retentionDays} days from when it
        left or, if later, from when its listing stopped advertising (sold and its original pages closed), then deleted
        with its copies.
      </p>
      <Form method="get" className="mt-4 flex flex-wrap gap-2 text-sm">
        <label className="flex flex-col">
          Listing
          <select name="folder" defaultValue={folderId ?? ""} className="mt-1 rounded border p-2">
            <option value="">All listings</option>
            {listings.map((l) => (
              <option key={l.folderId} value={l.folderId}>
                {l.name}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col">
          From
          <input type="date" name="from" defaultValue={range.from} required className="mt-1 rounded border p-2" />
        </label>
        <label className="flex flex-col">
          To
          <input type="date" name="to" defaultValue={range.to} required className="mt-1 rounded border p-2" />
        </label>
        <button type="submit" className="self-end rounded bg-slate-900 px-4 py-2 text-white">
          Show
        </button>
        <a href={`/teams/${team.id}/record.csv?${csv}`} className="self-end px-2 py-2 underline" download>
          Download CSV
        </a>
      </Form>
      {rows.length === 0 ? (
        <p className="mt-4 text-sm">Nothing left the team's listings in this range.</p>
      ) : (
        <table className="mt-4 w-full text-left text-sm">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Listing</th>
              <th>Photo</th>
              <th>Version</th>
              <th>How</th>
              <th>Member</th>
              <th>MLS profile</th>
              <th>Disclosure</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} className="border-t align-top">
                <td>{r.at}</td>
                <td>{r.listing}</td>
                <td>{r.photo}</td>
                <td>{r.version}</td>
                <td>{r.via}</td>
                <td>{r.member}</td>
                <td>{r.profile}</td>
                <td>{r.disclosure}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
