import { fileURLToPath } from "node:url";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import type { Figure } from "./report.ts";

// Jobs at provider latencies spread from 1 s to 119 s (the provider's timeout is 120 s), all asked for at once: how
// many completed and how many were refunded (docs/decisions/0085-jobs-held-by-the-alarm.md). Every one should
// complete. Called by bench/run.ts; `node bench/jobs.ts` runs it alone on its own stack.
//
// The user's queue starts them as its plan's concurrency allows (no plan: 4 at once, ADR 0140), so the later ones
// start only when earlier ones end: the 119 s call starts at about 90 s and ends at about 210 s. Each job is
// therefore judged as the product judges it, from its own start: it is unsettled once it is neither succeeded nor
// failed past its start + the provider's timeout + the alarm's watch margin (`jobDeadline` in
// workers/objects/user/jobs/job-rows.ts), with a poll's grace. A job left queued while none of the user's jobs runs is
// stuck too. (Before, every job was given 200 s from the first request, which the 119 s job could never meet.)

const LATENCIES_S = [1, 15, 30, 45, 60, 75, 90, 100, 110, 119];
/** The product's DEFAULT_PROVIDER_TIMEOUT_MS (workers/adapters/provider.ts; the bench's stack does not set it). */
const PROVIDER_TIMEOUT_MS = 120_000;
/** JOB_WATCH_MARGIN_MS (workers/objects/user/jobs/job-rows.ts): the alarm calls a running job lost after this. */
const JOB_WATCH_MARGIN_MS = 30_000;
const POLL_MS = 2_000;
/** A poll's lateness and the alarm's own lateness beyond a job's deadline. */
const GRACE_MS = 15_000;
/** How long jobs may stay queued while none of the user's jobs runs before they count as stuck. */
const QUEUED_IDLE_MS = 30_000;

interface JobState {
  status: string;
  startedAt: number | null;
  finishedAt: number | null;
}

export async function measureJobLatencies(stack: { url: string; ports: { provider: number } }): Promise<Figure[]> {
  const provider = `http://127.0.0.1:${stack.ports.provider}`;
  const user = await createFixtureUser(stack.url, { credits: LATENCIES_S.length });
  if (!user.sessionToken) throw new Error("bench: fixture user came without a session");
  const photos = await seedPhotos(
    { baseUrl: stack.url, sessionToken: user.sessionToken },
    LATENCIES_S.length,
    "Latency",
  );
  await fetch(`${provider}/_emulator/mode`, {
    method: "POST",
    body: JSON.stringify({ mode: "ok", latencyMs: 0, latencies: LATENCIES_S.map((s) => s * 1000) }),
  });
  const headers = { Cookie: `sw_session=${user.sessionToken}`, "Content-Type": "application/json", Origin: stack.url };
  const started = Date.now();
  const ids: string[] = [];
  // One at a time, so each takes the next latency in order.
  for (const photoId of photos) {
    const res = await fetch(`${stack.url}/api/photos/${photoId}/jobs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "modern" }),
    });
    if (res.status !== 202) throw new Error(`bench: job not started (${res.status})`);
    ids.push(((await res.json()) as { job: { id: string } }).job.id);
  }
  const state = new Map<string, JobState>();
  const settled = (s: JobState | undefined) => s?.status === "succeeded" || s?.status === "failed";
  const pastDeadline = (s: JobState | undefined, now: number) =>
    s?.startedAt != null && now > s.startedAt + PROVIDER_TIMEOUT_MS + JOB_WATCH_MARGIN_MS + GRACE_MS;
  let idleSince: number | null = null;
  for (;;) {
    for (const id of ids) {
      if (settled(state.get(id))) continue;
      const res = await fetch(`${stack.url}/api/jobs/${id}`, { headers });
      const { job } = (await res.json()) as { job: JobState };
      state.set(id, { status: job.status, startedAt: job.startedAt, finishedAt: job.finishedAt });
    }
    const now = Date.now();
    const open = ids.map((id) => state.get(id)).filter((s) => !settled(s));
    if (open.length === 0) break;
    const queued = open.filter((s) => s?.status === "queued");
    const running = open.filter((s) => s?.status !== "queued");
    idleSince = queued.length > 0 && running.length === 0 ? (idleSince ?? now) : null;
    const queuedStuck = idleSince !== null && now - idleSince > QUEUED_IDLE_MS;
    if (running.every((s) => pastDeadline(s, now)) && (queued.length === 0 || queuedStuck)) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
  const all = ids.map((id) => state.get(id));
  const completed = all.filter((s) => s?.status === "succeeded").length;
  const refunded = all.filter((s) => s?.status === "failed").length;
  const last = all.at(-1);
  const group = `jobs at provider latencies ${LATENCIES_S[0]}-${LATENCIES_S.at(-1)} s`;
  const figures: Figure[] = [
    { group, name: `completed of ${ids.length}`, value: completed, unit: "jobs", budget: ids.length, op: ">=" },
    { group, name: "refunded", value: refunded, unit: "jobs", budget: 0, op: "<=" },
    {
      group,
      name: "unsettled past their own start + 120 s timeout + 30 s margin (or queued with none running)",
      value: ids.length - completed - refunded,
      unit: "jobs",
      budget: 0,
      op: "<=",
    },
    {
      group,
      name: "wall time (the user's queue runs 4 at once)",
      value: Math.round((Date.now() - started) / 100) / 10,
      unit: "s",
    },
  ];
  if (last?.startedAt != null) {
    figures.push({
      group,
      name: `the ${LATENCIES_S.at(-1)} s job: started after the first request`,
      value: Math.round((last.startedAt - started) / 100) / 10,
      unit: "s",
    });
    if (settled(last) && last.finishedAt != null) {
      figures.push({
        group,
        name: `the ${LATENCIES_S.at(-1)} s job: from its start to its result`,
        value: Math.round((last.finishedAt - last.startedAt) / 100) / 10,
        unit: "s",
      });
    }
  }
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { runAlone } = await import("./alone.ts");
  await runAlone("jobs", { port: 5391, emulatorPortBase: 4390 }, measureJobLatencies);
}
