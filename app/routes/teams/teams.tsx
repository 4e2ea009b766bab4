import { requireUser } from "@workers/http/auth";
import { readForm } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { teamNameField } from "@workers/services/teams/actions";
import { createTeam, myTeams } from "@workers/services/teams/teams";
import { Form, Link, redirect } from "react-router";
import { z } from "zod";
import { TEAM_ROLE_LABELS } from "~/shared/teams";
import type { Route } from "./+types/teams";

// The user's teams and the form that makes a new one (issue 47). Server-rendered; the form posts without JavaScript.

export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Teams · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  return { teams: await myTeams(getDeps(context).db, user.id) };
}

const createInput = z.object({ intent: z.literal("create-team"), name: teamNameField });

export async function action({ request, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const form = await readForm(request, createInput);
  if (!form.ok) return failureData(form);
  const teamId = await createTeam(getDeps(context), user.id, form.data.name);
  return redirect(`/teams/${teamId}`);
}

export default function Teams({ loaderData, actionData }: Route.ComponentProps) {
  const error = actionData && "error" in actionData ? String(actionData.error) : null;
  return (
    <div className="mx-auto max-w-2xl p-4 sm:p-6">
      <h1 className="text-2xl font-semibold">Teams</h1>
      {loaderData.teams.length === 0 ? (
        <p className="mt-2 text-slate-600">You are not in a team yet.</p>
      ) : (
        <ul className="mt-4 divide-y rounded border">
          {loaderData.teams.map((t) => (
            <li key={t.id} className="flex items-center justify-between p-3">
              <Link to={`/teams/${t.id}`} className="font-medium underline">
                {t.name}
              </Link>
              <span className="text-sm text-slate-600">{TEAM_ROLE_LABELS[t.role]}</span>
            </li>
          ))}
        </ul>
      )}
      <h2 className="mt-8 text-lg font-semibold">Create a team</h2>
      <Form method="post" className="mt-2 flex flex-wrap gap-2">
        <input type="hidden" name="intent" value="create-team" />
        <label className="flex flex-1 flex-col text-sm">
          Team name
          <input name="name" required maxLength={80} className="mt-1 rounded border p-2" />
        </label>
        <button type="submit" className="self-end rounded bg-slate-900 px-4 py-2 text-white">
          Create team
        </button>
      </Form>
      {error ? (
        <p role="alert" className="mt-2 text-red-700">
          {error}
        </p>
      ) : null}
    </div>
  );
}
