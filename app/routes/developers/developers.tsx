import { apiReference } from "@workers/http/api-reference";
import { BackLink } from "~/components/back-link";
import type { Route } from "./+types/developers";

// The API reference, server-rendered from the same OpenAPI document the API
// serves at /api/v1/openapi.json (docs/decisions/0120-public-api.md). Plain
// React: no renderer library, nothing added to any other page's bundle.

// A signed-in page: the app's header with the balance, not the public one (app/root.tsx).
export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [
  { title: "API reference · Stagewise" },
  { name: "description", content: "Stage photos, replace skies and remove furniture from your own software." },
];

interface Operation {
  method: string;
  path: string;
  summary: string;
  description: string;
  parameters: { name: string; in: string; required: boolean; description: string }[];
  body: { type: string; schema: string } | null;
  responses: { status: string; description: string; schema: string | null }[];
}

type Doc = {
  servers?: { url: string }[];
  paths?: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, unknown> };
};

function schemaName(s: unknown): string | null {
  if (!s || typeof s !== "object") return null;
  const ref = (s as { $ref?: string }).$ref;
  if (ref) return ref.split("/").pop() ?? null;
  const t = (s as { type?: string; format?: string }).type;
  return t ? `${t}${(s as { format?: string }).format ? ` (${(s as { format?: string }).format})` : ""}` : null;
}

function operations(doc: Doc): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters as { name: string; in: string; required?: boolean; description?: string }[]) ?? [];
      const content = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
      const bodyType = content ? Object.keys(content)[0] : undefined;
      const responses =
        (op.responses as Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>) ??
        {};
      out.push({
        method: method.toUpperCase(),
        path,
        summary: String(op.summary ?? ""),
        description: String(op.description ?? ""),
        parameters: params.map((p) => ({
          name: p.name,
          in: p.in,
          required: Boolean(p.required),
          description: p.description ?? "",
        })),
        body: bodyType ? { type: bodyType, schema: schemaName(content?.[bodyType]?.schema) ?? "" } : null,
        responses: Object.entries(responses).map(([status, r]) => ({
          status,
          description: r.description ?? "",
          schema: r.content ? schemaName(Object.values(r.content)[0]?.schema) : null,
        })),
      });
    }
  }
  return out;
}

export function loader({ request }: Route.LoaderArgs) {
  const origin = new URL(request.url).origin;
  const doc = (apiReference(origin) ?? {}) as Doc;
  return {
    server: doc.servers?.[0]?.url ?? `${origin}/api/v1`,
    operations: operations(doc),
    schemas: Object.entries(doc.components?.schemas ?? {}).map(([name, s]) => ({
      name,
      json: JSON.stringify(s, null, 2),
    })),
  };
}

export function headers() {
  return { "Cache-Control": "public, max-age=300" };
}

const VERIFY = `import { createHmac, timingSafeEqual } from "node:crypto";

// header: the Stagewise-Signature header; body: the raw request body (a string)
function verify(secret, header, body, toleranceSeconds = 300) {
  const items = header.split(",").map((p) => p.split("="));
  const t = Number(items.find(([k]) => k === "t")?.[1]);
  if (!t || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(\`\${t}.\${body}\`).digest("hex"));
  // Right after a secret is replaced, each secret signs: accept any v1 that matches.
  return items.some(([k, v]) => k === "v1" && v?.length === expected.length && timingSafeEqual(expected, Buffer.from(v)));
}`;

export default function Developers({ loaderData }: Route.ComponentProps) {
  const { server, operations: ops, schemas } = loaderData;
  return (
    <div className="container-page max-w-4xl py-10">
      <BackLink />
      <h1 className="mt-6 text-4xl font-extrabold tracking-tight">Stagewise API</h1>
      <p className="mt-3 text-muted">
        Stage photos, replace skies and remove furniture from your own software. Each job costs one credit, reserved
        when it is queued and returned if it fails. The machine-readable description is at{" "}
        <a className="underline" href="/api/v1/openapi.json">
          /api/v1/openapi.json
        </a>{" "}
        (OpenAPI 3.1): generate a typed client from it.
      </p>

      <section className="mt-8" aria-labelledby="basics">
        <h2 id="basics" className="text-2xl font-bold">
          Basics
        </h2>
        <ul className="mt-3 list-disc space-y-2 pl-6">
          <li>
            Base URL: <code>{server}</code>
          </li>
          <li>
            Authenticate with <code>Authorization: Bearer sw_…</code>. Create keys in{" "}
            <a className="underline" href="/settings">
              Settings → API keys
            </a>
            ; each has the scopes <code>stage</code> (upload, start jobs) and/or <code>read</code>. A revoked key is
            refused on its next request.
          </li>
          <li>
            Send an <code>Idempotency-Key</code> header with every POST. A retry with the same key gets the first answer
            (with <code>Idempotent-Replayed: true</code>) and is never charged twice. Keys are kept 24 hours.
          </li>
          <li>
            Each key may make 300 requests a minute; beyond that the answer is 429 with <code>Retry-After</code>.
          </li>
          <li>
            Errors are JSON: <code>{'{ "ok": false, "code": "invalid", "error": "…" }'}</code> with a 4xx status.
          </li>
        </ul>
      </section>

      <section className="mt-8" aria-labelledby="callbacks">
        <h2 id="callbacks" className="text-2xl font-bold">
          Callbacks
        </h2>
        <p className="mt-3">
          Name a <code>callbackUrl</code> when you start a job and we POST a JSON event to it when the job succeeds or
          fails:{" "}
          <code>{'{ "id", "type": "job.succeeded" | "job.failed", "created", "data": { "job", "version" } }'}</code>.
          Answer with any 2xx. Other answers, timeouts (10 s) and redirects are retried with backoff (30 s, 2 min, 10
          min, 30 min, 1 h, 2 h, then every 4 h) for 24 hours; the log is on the API keys page.
        </p>
        <p className="mt-3">
          The event's <code>version</code> carries the structure check's verdict (<code>structure</code>) and where to
          go next, as the API's answers do: a <code>downloadUrl</code>, or for a result the check refused (it moved
          walls, windows or doors; the job failed and its credit went back) no download but a <code>keepUrl</code>: POST
          it to keep the result for one credit, then download your own copy. A kept result never goes into a listing.
        </p>
        <p className="mt-3">
          Every callback carries <code>Stagewise-Signature: t=&lt;unix seconds&gt;,v1=&lt;hex&gt;</code>, where{" "}
          <code>v1</code> is HMAC-SHA256 of <code>t + "." + body</code> with the key's callback signing secret, shown
          when you created the key or last replaced the secret on the settings page (the scheme Stripe uses). For 24
          hours after you replace a secret the header carries one <code>v1</code> for the old secret and one for the
          new, the new one last, so your receiver can switch without missing a callback; if the old secret leaked, stop
          it at once with "Stop the old secret now" beside the key. Verify on the raw body, accept any <code>v1</code>{" "}
          that matches, and refuse old timestamps:
        </p>
        <pre className="mt-3 overflow-x-auto rounded bg-gray-900 p-4 text-sm text-gray-100">
          <code>{VERIFY}</code>
        </pre>
      </section>

      <section className="mt-8" aria-labelledby="endpoints">
        <h2 id="endpoints" className="text-2xl font-bold">
          Endpoints
        </h2>
        {ops.map((op) => (
          <article key={`${op.method} ${op.path}`} className="card mt-4" data-testid="operation">
            <h3 className="font-mono text-lg font-semibold">
              <span className="text-brand-700">{op.method}</span> {op.path}
            </h3>
            <p className="mt-1 font-semibold">{op.summary}</p>
            {op.description ? <p className="mt-1 whitespace-pre-line text-sm text-muted">{op.description}</p> : null}
            {op.parameters.length > 0 ? (
              <ul className="mt-2 text-sm">
                {op.parameters.map((p) => (
                  <li key={`${p.in}:${p.name}`}>
                    <code>{p.name}</code> ({p.in}
                    {p.required ? ", required" : ""}){p.description ? `: ${p.description}` : ""}
                  </li>
                ))}
              </ul>
            ) : null}
            {op.body ? (
              <p className="mt-2 text-sm">
                Body: <code>{op.body.type}</code>{" "}
                {op.body.schema ? <a href={`#schema-${op.body.schema}`}>{op.body.schema}</a> : null}
              </p>
            ) : null}
            <ul className="mt-2 text-sm">
              {op.responses.map((r) => (
                <li key={r.status}>
                  <code>{r.status}</code> {r.description}
                  {r.schema ? (
                    <>
                      {" "}
                      (<a href={`#schema-${r.schema}`}>{r.schema}</a>)
                    </>
                  ) : null}
                </li>
              ))}
            </ul>
          </article>
        ))}
      </section>

      <section className="mt-8" aria-labelledby="schemas">
        <h2 id="schemas" className="text-2xl font-bold">
          Schemas
        </h2>
        {schemas.map((s) => (
          <details key={s.name} id={`schema-${s.name}`} className="mt-3">
            <summary className="cursor-pointer font-mono font-semibold">{s.name}</summary>
            <pre className="mt-2 overflow-x-auto rounded bg-gray-100 p-3 text-xs">
              <code>{s.json}</code>
            </pre>
          </details>
        ))}
      </section>
    </div>
  );
}
