import { devPageTakesNoForm } from "@workers/http/auth";
import { devToolsEnabled, requestContext } from "@workers/http/context";
import { data } from "react-router";
import type { Route } from "./+types/mailbox";

interface StoredMail {
  id: string;
  to: string[];
  subject: string;
  text: string;
  created_at: string;
}

export const meta: Route.MetaFunction = () => [{ title: "Dev mailbox" }];

// Development only: lists what the mail emulator received. A deployed worker
// (DEV_TOOLS unset) answers 404.
export async function loader({ context }: Route.LoaderArgs) {
  const { env } = context.get(requestContext);
  if (!devToolsEnabled(env) || !env.MAIL_API_URL) throw data(null, { status: 404 });
  const res = await fetch(`${env.MAIL_API_URL.replace(/\/$/, "")}/_emulator/emails`);
  if (!res.ok) throw data("The mail emulator is not answering.", { status: 502 });
  const messages = (await res.json()) as StoredMail[];
  return { messages: messages.slice().reverse() };
}

function linkify(text: string) {
  const parts = text.split(/(https?:\/\/[^\s]+)/g);
  return parts.map((part, i) =>
    /^https?:\/\//.test(part) ? (
      <a key={i} href={part} className="break-all font-medium text-brand-700 underline">
        {part}
      </a>
    ) : (
      part
    ),
  );
}

// A form sent here: 404 where dev tools are off, as the loader answers.
export const action = devPageTakesNoForm;

export default function Mailbox({ loaderData }: Route.ComponentProps) {
  return (
    <div className="container-page py-10">
      <h1 className="text-2xl font-bold">Dev mailbox</h1>
      <p className="mt-1 text-sm text-muted">
        Every e-mail the app sent while running locally, newest first. This page does not exist in production.
      </p>
      {loaderData.messages.length === 0 ? <p className="mt-8 text-muted">No messages yet.</p> : null}
      <ul className="mt-6 space-y-4">
        {loaderData.messages.map((m) => (
          <li key={m.id} className="card" data-testid="mail">
            <p className="text-sm text-muted">
              To {m.to.join(", ")} · {new Date(m.created_at).toLocaleString("en-US")}
            </p>
            <h2 className="mt-1 font-semibold">{m.subject}</h2>
            <p className="mt-3 whitespace-pre-wrap text-sm">{linkify(m.text)}</p>
          </li>
        ))}
      </ul>
    </div>
  );
}
