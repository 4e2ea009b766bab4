import { fileURLToPath } from "node:url";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "./library-bytes.ts";
import type { Figure } from "./report.ts";

// Jobs at provider latencies spread from 1 s to 119 s (the timeout is 120 s), all started at once: how many
// completed and how many were refunded (docs/decisions/0085-jobs-held-by-the-alarm.md). Every one should complete.
// Called by bench/run.ts; `node bench/jobs.ts` runs it alone on its own stack.

const LATENCIES_S = [1, 15, 30, 45, 60, 75, 90, 100, 110, 119];

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
  const final = new Map<string, string>();
  while (final.size < ids.length && Date.now() - started < 200_000) {
    for (const id of ids) {
      if (final.has(id)) continue;
      const res = await fetch(`${stack.url}/api/jobs/${id}`, { headers });
      const { job } = (await res.json()) as { job: { status: string } };
      if (job.status === "succeeded" || job.status === "failed") final.set(id, job.status);
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
  await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
  const completed = [...final.values()].filter((s) => s === "succeeded").length;
  const refunded = [...final.values()].filter((s) => s === "failed").length;
  const group = `jobs at provider latencies ${LATENCIES_S[0]}-${LATENCIES_S.at(-1)} s`;
  return [
    { group, name: `completed of ${ids.length}`, value: completed, unit: "jobs", budget: ids.length, op: ">=" },
    { group, name: "refunded", value: refunded, unit: "jobs", budget: 0, op: "<=" },
    { group, name: "unsettled after 200 s", value: ids.length - final.size, unit: "jobs", budget: 0, op: "<=" },
    { group, name: "wall time", value: Math.round((Date.now() - started) / 100) / 10, unit: "s" },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { runAlone } = await import("./alone.ts");
  await runAlone("jobs", { port: 5391, emulatorPortBase: 4390 }, measureJobLatencies);
}
