import { requireUser } from "@workers/http/auth";
import { readForm } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { accept, pendingInvitation } from "@workers/services/teams/invitations";
import { Form, redirect } from "react-router";
import { z } from "zod";
import { INVITATION_GONE } from "~/shared/teams";
import type { Route } from "./+types/join";

// An invitation's link (issue 47): signed in (or signed up) with the invited address, the person accepts it with one
// button; the link works once, for 7 days. Without a session, /login brings them back here.

export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Join a team · Stagewise" }];

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const deps = getDeps(context);
  const found = await pendingInvitation(deps.db, params.token.slice(0, 64), deps.clock());
  if (!found) return { invitation: null, email: user.email };
  return { invitation: { teamName: found.teamName, email: found.invitation.email }, email: user.email };
}

const acceptInput = z.object({ intent: z.literal("accept") });

export async function action({ request, context, params }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const form = await readForm(request, acceptInput);
  if (!form.ok) return failureData(form);
  const res = await accept(getDeps(context), user, params.token.slice(0, 64));
  if (!res.ok) return failureData(res);
  return redirect(`/teams/${res.teamId}`);
}

export default function Join({ loaderData, actionData }: Route.ComponentProps) {
  const { invitation, email } = loaderData;
  const error = actionData && "error" in actionData ? String(actionData.error) : null;
  return (
    <div className="mx-auto max-w-lg p-4 sm:p-6">
      <h1 className="text-2xl font-semibold">Join a team</h1>
      {invitation ? (
        <>
          <p className="mt-2">
            You are invited to join <strong>{invitation.teamName}</strong> as {invitation.email}. You are signed in as{" "}
            {email}.
          </p>
          <Form method="post" className="mt-4">
            <input type="hidden" name="intent" value="accept" />
            <button type="submit" className="rounded bg-slate-900 px-4 py-2 text-white">
              Accept the invitation
            </button>
          </Form>
        </>
      ) : (
        <p className="mt-2">{INVITATION_GONE}</p>
      )}
      {error ? (
        <p role="alert" className="mt-2 text-red-700">
          {error}
        </p>
      ) : null}
    </div>
  );
}
