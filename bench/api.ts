import { fileURLToPath } from "node:url";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { BUDGETS, type Figure } from "./report.ts";

// Job creation through the public API (/api/v1, an API key, an
// Idempotency-Key) against the same job created by the page's own call
// (/api/photos/:id/jobs with the session cookie): the time until the 202, and
// the API's overhead over it (key lookup, rate limit, idempotency record): the percentiles of the rounds' own
// differences (each round times both calls back to back), not a difference of two percentiles. With 40 rounds a
// p99 was the slowest call of each path, and "API p99 minus page p99" came out anywhere from -163 to +195 ms
// between runs of the same code, depending on which path's one slowest call was slower.
// Called by bench/run.ts; `node bench/api.ts` runs it alone on its own stack.

const ROUNDS = 100;
const PROVIDER_LATENCY_MS = 60;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Creates an API key through the settings page's form, as a person would, and reads it off the answer. */
async function createKey(baseUrl: string, cookie: string): Promise<string> {
  const res = await fetch(`${baseUrl}/settings`, {
    method: "POST",
    headers: { Cookie: cookie, Origin: baseUrl, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ intent: "create", name: "bench", scope_stage: "on", scope_read: "on" }),
  });
  const token = /sw_[a-z2-7]{32}/.exec(await res.text())?.[0];
  if (!token) throw new Error(`bench: no API key in the settings answer (${res.status})`);
  return token;
}

/**
 * Waits for a job to end as the page does (app/lib/use-job.ts): a long poll the server answers when the job has
 * ended (ADR 0146), asked again until it has. Answers the ended job.
 */
export async function jobEnded(
  baseUrl: string,
  jobId: string,
  headers: Record<string, string>,
): Promise<{ status: "succeeded" | "failed"; error: string | null }> {
  for (;;) {
    const res = await fetch(`${baseUrl}/api/jobs/${jobId}?wait=20`, { headers });
    const { job } = (await res.json()) as { job: { status: string; error: string | null } };
    if (job.status === "succeeded" || job.status === "failed") return { status: job.status, error: job.error };
  }
}

export async function measureApiJobCreation(stack: { url: string; ports: { provider: number } }): Promise<Figure[]> {
  const provider = `http://127.0.0.1:${stack.ports.provider}`;
  // The provider emulator runs in this process (startStack), and its image work is synchronous. Answering at once,
  // it did that work while this process waited to read the 202 it was timing: creations measured 40-70 ms here
  // against 12-16 ms from another process. 60 ms of provider latency moves the work after the 202 is read.
  await fetch(`${provider}/_emulator/mode`, {
    method: "POST",
    body: JSON.stringify({ mode: "ok", latencyMs: PROVIDER_LATENCY_MS }),
  });
  const user = await createFixtureUser(stack.url, { credits: ROUNDS * 2 + 10 });
  if (!user.sessionToken) throw new Error("bench: fixture user came without a session");
  const cookie = `sw_session=${user.sessionToken}`;
  const [photoId] = await seedPhotos({ baseUrl: stack.url, sessionToken: user.sessionToken }, 1, "API bench room");
  const token = await createKey(stack.url, cookie);
  const body = JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "scandinavian" });

  // Each job is created on a quiet object: the next call waits until the last job has ended. Created back to back,
  // with the provider answering at once, 202s took up to 450 ms on either path, behind the previous jobs' results
  // in the user's object or the emulator's image work on the same cores (not separated): those waits, not the
  // API's own work, made the tail.
  const timed = async (url: string, headers: Record<string, string>): Promise<number> => {
    const t = performance.now();
    const res = await fetch(url, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body });
    const text = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 202) throw new Error(`bench: job creation answered ${res.status} ${text.slice(0, 200)}`);
    const { job } = JSON.parse(text) as { job: { id: string } };
    await jobEnded(stack.url, job.id, { Cookie: cookie });
    return ms;
  };
  const ui: number[] = [];
  const api: number[] = [];
  const overhead: number[] = [];
  // Interleaved, so both paths see the same machine load; the first round of each warms up.
  for (let i = 0; i <= ROUNDS; i++) {
    const u = await timed(`${stack.url}/api/photos/${photoId}/jobs`, {
      Cookie: cookie,
      Origin: stack.url,
      "Idempotency-Key": crypto.randomUUID(),
    });
    const a = await timed(`${stack.url}/api/v1/photos/${photoId}/jobs`, {
      Authorization: `Bearer ${token}`,
      "Idempotency-Key": `bench-${i}`,
    });
    if (i > 0) {
      ui.push(u);
      api.push(a);
      overhead.push(a - u);
    }
  }
  await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
  const round = (n: number) => Math.round(n * 10) / 10;
  const uiP50 = percentile(ui, 50);
  const uiP99 = percentile(ui, 99);
  const apiP50 = percentile(api, 50);
  const apiP99 = percentile(api, 99);
  return [
    { group: "Public API", name: "job creation via the page's call p50 (baseline)", value: round(uiP50), unit: "ms" },
    { group: "Public API", name: "job creation via the page's call p99 (baseline)", value: round(uiP99), unit: "ms" },
    { group: "Public API", name: "job creation via /api/v1 p50", value: round(apiP50), unit: "ms" },
    { group: "Public API", name: "job creation via /api/v1 p99", value: round(apiP99), unit: "ms" },
    {
      group: "Public API",
      name: "API overhead over the page's call in the same round p50",
      value: round(percentile(overhead, 50)),
      unit: "ms",
      ...BUDGETS.apiOverheadP50,
    },
    {
      group: "Public API",
      name: "API overhead over the page's call in the same round p99",
      value: round(percentile(overhead, 99)),
      unit: "ms",
      ...BUDGETS.apiOverheadP99,
    },
  ];
}

// `node bench/api.ts`: this measurement alone, on its own stack.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { runAlone } = await import("./alone.ts");
  const { measureApiPhotoUpload } = await import("./api-photo.ts");
  await runAlone("api", { port: 5191, emulatorPortBase: 4095 }, async (stack) => [
    ...(await measureApiJobCreation(stack)),
    ...(await measureApiPhotoUpload(stack)),
  ]);
}
