import { requireUser } from "@workers/http/auth";
import { checkFields, readFormFields } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { reauthValidUntil, startGoogleReauth } from "@workers/services/accounts/google-reauth";
import {
  createApiKey,
  createKeyInput,
  keysRevokedNotice,
  listApiKeys,
  listDeliveries,
  REVOKED_FOR_YOU,
  revokeApiKey,
} from "@workers/services/api-keys";
import {
  endPreviousCallbackSecret,
  oldSecretSignsUntil,
  rotateCallbackSecret,
} from "@workers/services/callback-secrets";
import { secureCookies } from "@workers/services/current-user";
import { deleteAccount, deletionMethods, requestExport } from "@workers/services/mls/account-data";
import { getLabelDefaults, labelDefaultsInput, saveLabelDefaults } from "@workers/services/mls/labels";
import { advertisedPages } from "@workers/services/mls/listing-status";
import { clearSessionCookie } from "@workers/services/sessions";
import { data, Form, Link, redirect, useNavigation } from "react-router";
import { AccountDataSection } from "~/components/account-data-settings";
import { DisclosureSettingsSection } from "~/components/mls-disclosure-settings";
import { fail } from "~/shared/result";
import type { Route } from "./+types/settings";

// The account's settings: the API keys section (docs/decisions/0120-public-api.md).
// A new key and its callback signing secret are shown once, in the answer to
// the form that created them; the page keeps neither.

// A signed-in page: the app's header with the balance, not the public one (app/root.tsx).
export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Settings · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const deps = getDeps(context);
  const { db } = deps;
  const who = { userId: user.id, sessionId: user.sessionId };
  const [keys, deliveries, label, methods, googleConfirmedUntil, advertised] = await Promise.all([
    listApiKeys(db, user.id),
    listDeliveries(db, user.id),
    getLabelDefaults(db, user.id),
    deletionMethods(db, user.id),
    reauthValidUntil(deps, who),
    advertisedPages(db, user.id),
  ]);
  const now = deps.clock();
  return {
    // Why a key stopped working, when it was not its owner's doing (read here: the page's module stays server-free).
    keys: keys.map((k) => ({
      ...k,
      revokedWhy: k.revokedReason ? (REVOKED_FOR_YOU[k.revokedReason] ?? null) : null,
      // The secret a rotation replaced, while it still signs: its owner can stop it now (ADR 0353).
      oldSecretSignsUntil: k.revokedAt ? null : oldSecretSignsUntil(k, now),
    })),
    keysRevoked: keysRevokedNotice(keys),
    deliveries,
    label,
    deletion: { ...methods, googleConfirmedUntil },
    advertised,
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const deps = getDeps(context);
  const f = raw.fields;
  if (f.intent === "create") {
    const scopes = ["stage", "read"].filter((s) => f[`scope_${s}`] === "on");
    const input = checkFields(createKeyInput, { name: f.name ?? "", scopes });
    if (!input.ok) return failureData(input);
    const made = await createApiKey(deps, user.id, input.data);
    if (!made.ok) return failureData(made);
    return data(
      { created: { name: made.key.name, token: made.token, callbackSecret: made.callbackSecret } },
      { headers: { "Cache-Control": "no-store" } },
    );
  }
  if (f.intent === "revoke") {
    const res = await revokeApiKey(deps, user.id, String(f.keyId ?? "").slice(0, 64));
    if (!res.ok) return failureData(res);
    return { revoked: true };
  }
  if (f.intent === "rotate-callback-secret") {
    const res = await rotateCallbackSecret(deps, user.id, String(f.keyId ?? "").slice(0, 64));
    if (!res.ok) return failureData(res);
    return data(
      { rotated: { name: res.name, callbackSecret: res.callbackSecret, previousUntil: res.previousUntil } },
      { headers: { "Cache-Control": "no-store" } },
    );
  }
  if (f.intent === "end-previous-callback-secret") {
    const res = await endPreviousCallbackSecret(deps, user.id, String(f.keyId ?? "").slice(0, 64), deps.clock());
    if (!res.ok) return failureData(res);
    return { ended: `The old callback secret of “${res.name}” no longer signs callbacks.` };
  }
  if (f.intent === "label") {
    const input = checkFields(labelDefaultsInput, {
      profile: f.profile,
      text: f.text ?? "",
      corner: f.corner,
      size: f.size,
      tone: f.tone,
      qr: f.qr === "on",
    });
    if (!input.ok) return failureData(input);
    await saveLabelDefaults(deps.db, user.id, input.data, deps.clock());
    return { saved: "Disclosure saved." };
  }
  if (f.intent === "export") {
    const res = await requestExport(deps, user.id);
    if (!res.ok) return failureData(res);
    return { saved: "We are preparing your export and will e-mail you its link." };
  }
  if (f.intent === "reauth-google") {
    // Leaves for Google to confirm the deletion; it comes back to /settings?confirm=delete.
    const started = await startGoogleReauth(
      deps,
      { userId: user.id, sessionId: user.sessionId },
      secureCookies(deps.env, request),
    );
    if (!started.ok) return failureData(started);
    return redirect(started.url, { headers: { "Set-Cookie": started.cookie } });
  }
  if (f.intent === "delete") {
    const proof = f.confirm === "google" ? { googleSessionId: user.sessionId } : { password: f.password ?? "" };
    const res = await deleteAccount(deps, user.id, proof);
    if (!res.ok) return failureData(res);
    const secure = new URL(request.url).protocol === "https:";
    return redirect("/?deleted=1", { headers: { "Set-Cookie": clearSessionCookie(secure) } });
  }
  return failureData(fail("invalid", "Unknown action."));
}

function when(ms: number | null): string {
  if (ms === null) return "Never";
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export default function Settings({ loaderData, actionData }: Route.ComponentProps) {
  const { keys, keysRevoked, deliveries, label, deletion, advertised } = loaderData;
  const busy = useNavigation().state !== "idle";
  const created = actionData && "created" in actionData ? actionData.created : null;
  const rotated = actionData && "rotated" in actionData ? actionData.rotated : null;
  const error = actionData && "error" in actionData ? actionData.error : null;
  const saved = actionData && "saved" in actionData ? actionData.saved : null;
  const ended = actionData && "ended" in actionData ? actionData.ended : null;
  return (
    <div className="container-page max-w-3xl py-10">
      <div className="flex items-center justify-between gap-4">
        <h1 className="text-3xl font-extrabold tracking-tight">Settings</h1>
        <Link to="/dashboard" aria-label="Close" className="btn-ghost h-11 w-11 rounded-full p-0 text-xl">
          <span aria-hidden="true">✕</span>
        </Link>
      </div>
      <p className="mt-2 text-sm text-muted">
        <Link to="/billing" className="underline">
          Billing
        </Link>{" "}
        ·{" "}
        <Link to="/developers" className="underline">
          API reference
        </Link>
      </p>

      <section className="card mt-6" aria-labelledby="api-keys-title">
        <h2 id="api-keys-title" className="text-lg font-semibold">
          API keys
        </h2>
        <p className="mt-1 text-sm text-muted">
          A key acts as you through the API: <strong>stage</strong> uploads photos and starts jobs (one credit each),{" "}
          <strong>read</strong> reads jobs, versions and your balance.
        </p>
        {keysRevoked && !created ? (
          <p className="alert-error mt-4" role="status" data-testid="keys-revoked">
            {keysRevoked}
          </p>
        ) : null}
        {error ? (
          <p className="alert-error mt-4" role="alert">
            {error}
          </p>
        ) : null}
        {created ? (
          <div className="alert-success mt-4" role="status" data-testid="new-key">
            <p className="font-semibold">
              Key “{created.name}” created. Copy both values now: they are not shown again.
            </p>
            <p className="mt-2 text-sm">API key</p>
            <code className="block break-all" data-testid="new-key-token">
              {created.token}
            </code>
            <p className="mt-2 text-sm">Callback signing secret</p>
            <code className="block break-all" data-testid="new-key-secret">
              {created.callbackSecret}
            </code>
          </div>
        ) : null}
        {rotated ? (
          <div className="alert-success mt-4" role="status" data-testid="rotated-secret">
            <p className="font-semibold">
              New callback signing secret for “{rotated.name}”. Copy it now: it is not shown again. Callbacks are signed
              with it from now on
              {rotated.previousUntil
                ? `, and until ${new Date(rotated.previousUntil).toUTCString()} also with the old one, so your receiver can switch without missing a callback. If the old one leaked, stop it now below.`
                : "; the old one no longer verifies."}
            </p>
            <code className="mt-2 block break-all" data-testid="rotated-secret-value">
              {rotated.callbackSecret}
            </code>
          </div>
        ) : null}
        {ended ? (
          <p className="alert-success mt-4" role="status" data-testid="ended-previous-secret">
            {ended}
          </p>
        ) : null}
        <Form method="post" className="mt-4 grid gap-3 sm:grid-cols-[1fr_auto]">
          <input type="hidden" name="intent" value="create" />
          <label className="grid gap-1 text-sm">
            Name
            <input name="name" required maxLength={60} className="input" placeholder="e.g. Listing sync" />
          </label>
          <fieldset className="flex items-end gap-4 text-sm">
            <legend className="sr-only">Scopes</legend>
            <label className="flex items-center gap-1">
              <input type="checkbox" name="scope_stage" defaultChecked /> stage
            </label>
            <label className="flex items-center gap-1">
              <input type="checkbox" name="scope_read" defaultChecked /> read
            </label>
            <button type="submit" className="btn-primary" disabled={busy}>
              Create key
            </button>
          </fieldset>
        </Form>
        {keys.length === 0 ? (
          <p className="mt-4 text-sm text-muted">No keys yet.</p>
        ) : (
          <table className="mt-4 w-full text-left text-sm" data-testid="api-keys">
            <thead>
              <tr>
                <th className="py-1">Name</th>
                <th>Key</th>
                <th>Scopes</th>
                <th>Last used</th>
                <th>
                  <span className="sr-only">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} className="border-t border-line">
                  <td className="py-2">{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.scopes.join(", ")}</td>
                  <td>
                    {when(k.lastUsedAt)}
                    {k.oldSecretSignsUntil ? (
                      <Form method="post" className="mt-1" data-testid="end-previous-secret">
                        <input type="hidden" name="intent" value="end-previous-callback-secret" />
                        <input type="hidden" name="keyId" value={k.id} />
                        <span className="block text-muted">
                          Old callback secret signs until {when(k.oldSecretSignsUntil)}
                        </span>
                        <button type="submit" className="btn-ghost text-danger" disabled={busy}>
                          Stop the old secret now <span className="sr-only">for {k.name}</span>
                        </button>
                      </Form>
                    ) : null}
                  </td>
                  <td className="text-right">
                    {k.revokedAt ? (
                      <span className="text-muted">Revoked{k.revokedWhy ? ` (${k.revokedWhy})` : ""}</span>
                    ) : (
                      <div className="flex justify-end gap-1">
                        <Form method="post">
                          <input type="hidden" name="intent" value="rotate-callback-secret" />
                          <input type="hidden" name="keyId" value={k.id} />
                          <button type="submit" className="btn-ghost" disabled={busy}>
                            New callback secret <span className="sr-only">for {k.name}</span>
                          </button>
                        </Form>
                        <Form method="post">
                          <input type="hidden" name="intent" value="revoke" />
                          <input type="hidden" name="keyId" value={k.id} />
                          <button type="submit" className="btn-ghost text-danger" disabled={busy}>
                            Revoke <span className="sr-only">{k.name}</span>
                          </button>
                        </Form>
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="card mt-6" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title" className="text-lg font-semibold">
          Callback deliveries
        </h2>
        <p className="mt-1 text-sm text-muted">
          Jobs that named a callback URL. Failed deliveries are retried with backoff for 24 hours.
        </p>
        {deliveries.length === 0 ? (
          <p className="mt-4 text-sm text-muted">No callbacks yet.</p>
        ) : (
          <table className="mt-4 w-full text-left text-sm" data-testid="deliveries">
            <thead>
              <tr>
                <th className="py-1">Job</th>
                <th>URL</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Last answer</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.jobId} className="border-t border-line align-top">
                  <td className="py-2">
                    <code>{d.jobId.slice(0, 8)}</code>
                  </td>
                  <td className="max-w-48 break-all">{d.url}</td>
                  <td>{d.status}</td>
                  <td>{d.attempts}</td>
                  <td>
                    {d.lastError ?? (d.lastStatus ? `HTTP ${d.lastStatus}` : "—")}
                    {d.status === "pending" && d.nextAt ? (
                      <span className="block text-muted">next try {when(d.nextAt)}</span>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {saved ? (
        <p className="alert-success mt-4" role="status">
          {saved}
        </p>
      ) : null}
      <DisclosureSettingsSection defaults={label} busy={busy} />
      <AccountDataSection busy={busy} deletion={deletion} advertisedPages={advertised} />
    </div>
  );
}
