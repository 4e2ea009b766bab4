import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startStack } from "../scripts/stack.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";

// The provider gate's fairness (issue 36 part 6, docs/decisions/0186-one-provider-gate.md): the production build
// with PROVIDER_CAP = 4 and the provider emulator answering every call after a fixed 2 s. Three users start a batch
// of 40 photos each; once the gate is full and their jobs wait, a fourth user stages one photo. Reported: that
// photo's wait (its request sent to its provider call arriving at the emulator, both on this machine's clock), the
// most provider calls in flight as the emulator counted them, and the throughput of the whole run.
// `npm run bench:fairness` (port 5999, emulators from 5010); writes bench/results/report-fairness.md.

const CAP = 4;
const LATENCY_MS = 2000;
const BATCHES = 3;
const PER_BATCH = 40;
const PORT = Number(process.env.BENCH_PORT ?? 5999);
const EMULATOR_PORT_BASE = Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 5010);

interface Session {
  token: string;
  headers: Record<string, string>;
}

async function session(url: string, credits: number): Promise<Session> {
  const user = await createFixtureUser(url, { credits });
  if (!user.sessionToken) throw new Error("bench: fixture user came without a session");
  return {
    token: user.sessionToken,
    headers: { Cookie: `sw_session=${user.sessionToken}`, "Content-Type": "application/json", Origin: url },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const load = loadavg();
  const stateDir = mkdtempSync(join(tmpdir(), "stagewise-bench-fairness-"));
  const stack = await startStack({
    port: PORT,
    emulatorPortBase: EMULATOR_PORT_BASE,
    persistDir: stateDir,
    build: process.env.SKIP_BUILD !== "1",
    logFile: join(stateDir, "wrangler.log"),
    quiet: true,
    requestLog: false,
    vars: { PROVIDER_CAP: String(CAP) },
  });
  const provider = `http://127.0.0.1:${stack.ports.provider}`;
  const emulator = async (body?: Record<string, unknown>) =>
    (await (
      await fetch(`${provider}/_emulator/mode`, body ? { method: "POST", body: JSON.stringify(body) } : {})
    ).json()) as { calls: number; inFlight: number; maxInFlight: number };
  try {
    const url = stack.url;
    const batchUsers = await Promise.all(Array.from({ length: BATCHES }, () => session(url, PER_BATCH)));
    const single = await session(url, 1);
    const photos: string[][] = [];
    for (const u of batchUsers)
      photos.push(await seedPhotos({ baseUrl: url, sessionToken: u.token }, PER_BATCH, "Listing room"));
    const [singlePhoto] = await seedPhotos({ baseUrl: url, sessionToken: single.token }, 1, "Single room");
    await emulator({ mode: "ok", latencyMs: LATENCY_MS });

    const started = performance.now();
    const batchIds = await Promise.all(
      batchUsers.map(async (u, i) => {
        const res = await fetch(`${url}/api/batches`, {
          method: "POST",
          headers: u.headers,
          body: JSON.stringify({
            designStyle: "modern",
            items: photos[i]!.map((photoId) => ({ photoId, roomType: "livingroom" })),
          }),
        });
        if (res.status !== 202) throw new Error(`bench: batch not started (${res.status} ${await res.text()})`);
        return ((await res.json()) as { batch: { id: string } }).batch.id;
      }),
    );
    // The gate is full and the batches' next jobs wait: a second in, mid-call.
    while ((await emulator()).inFlight < CAP) await sleep(50);
    await sleep(1000);

    const asked = Date.now();
    const askedAt = performance.now();
    const res = await fetch(`${url}/api/photos/${singlePhoto}/jobs`, {
      method: "POST",
      headers: single.headers,
      body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "modern" }),
    });
    if (res.status !== 202) throw new Error(`bench: single job not started (${res.status})`);
    const singleJob = ((await res.json()) as { job: { id: string } }).job.id;

    let callAt: number | null = null;
    let singleDoneMs: number | null = null;
    let singleStatus = "queued";
    let singleStartedAt: number | null = null;
    const counts = batchIds.map(() => ({ done: 0, failed: 0 }));
    const batchDoneMs: (number | null)[] = batchIds.map(() => null);
    while (performance.now() - started < 600_000) {
      if (callAt === null) {
        const log = (await (await fetch(`${provider}/_emulator/requests`)).json()) as {
          input_image_url?: string;
          at?: number;
        }[];
        callAt = log.find((e) => e.input_image_url?.includes(`/photos/${singlePhoto}/`) && e.at)?.at ?? null;
      }
      if (singleDoneMs === null) {
        const { job } = (await (await fetch(`${url}/api/jobs/${singleJob}`, { headers: single.headers })).json()) as {
          job: { status: string; startedAt: number | null };
        };
        singleStatus = job.status;
        singleStartedAt = job.startedAt;
        if (job.status === "succeeded" || job.status === "failed") singleDoneMs = performance.now() - askedAt;
      }
      for (const [i, id] of batchIds.entries()) {
        if (batchDoneMs[i] !== null) continue;
        const view = (await (await fetch(`${url}/api/batches/${id}`, { headers: batchUsers[i]!.headers })).json()) as {
          batch: { counts: { done: number; failed: number } };
        };
        counts[i] = view.batch.counts;
        if (counts[i]!.done + counts[i]!.failed >= PER_BATCH) batchDoneMs[i] = performance.now() - started;
      }
      if (singleDoneMs !== null && batchDoneMs.every((d) => d !== null)) break;
      await sleep(250);
    }
    const wallS = (performance.now() - started) / 1000;
    const seen = await emulator();
    // The emulator's log: each call's arrival (`at`) and its own time (`ms`: the latency and its image work).
    const log = (await (await fetch(`${provider}/_emulator/requests`)).json()) as { at?: number; ms?: number }[];
    const callMs = log.flatMap((e) => (typeof e.ms === "number" ? [e.ms] : [])).sort((a, b) => a - b);
    const medianCallMs = callMs.length > 0 ? Math.round(callMs[Math.floor(callMs.length / 2)]!) : null;
    const before = callAt === null ? null : log.filter((e) => e.at !== undefined && e.at >= asked && e.at < callAt!);
    const jobs = BATCHES * PER_BATCH + 1;
    const staged = counts.reduce((n, c) => n + c.done, 0) + (singleStatus === "succeeded" ? 1 : 0);
    const wait = callAt === null ? null : callAt - asked;
    const loadEnd = loadavg();
    const fmt = (l: number[]) => l.map((v) => v.toFixed(2)).join(" / ");
    const rows: [string, string, string][] = [
      [
        "single photo's wait: request sent → its provider call arriving",
        wait === null ? "not seen" : `${wait} ms`,
        medianCallMs === null
          ? "one provider call"
          : `≤ ${medianCallMs} ms, one provider call as timed below${wait !== null && wait <= medianCallMs ? ": ok" : ": OVER"}; ${wait !== null && wait <= LATENCY_MS ? "also" : "not"} within the ${LATENCY_MS / 1000} s latency alone`,
      ],
      [
        "single photo: request sent → its job holding a slot (marked running)",
        singleStartedAt === null ? "not seen" : `${singleStartedAt - asked} ms`,
        "",
      ],
      [
        "batch calls that reached the provider between the request and the photo's call",
        before === null ? "not seen" : String(before.length),
        "",
      ],
      [
        "one provider call, as the emulator timed it (median: latency + its image work)",
        medianCallMs === null ? "not seen" : `${medianCallMs} ms`,
        "",
      ],
      [
        "single photo: request sent → result",
        singleDoneMs === null ? "unsettled" : `${Math.round(singleDoneMs)} ms`,
        "",
      ],
      ["most provider calls in flight (emulator)", String(seen.maxInFlight), `≤ ${CAP}`],
      ["jobs staged", `${staged} of ${jobs}`, `${jobs}`],
      ["wall time, first batch sent → last job settled", `${wallS.toFixed(1)} s`, ""],
      [
        "throughput",
        `${(staged / wallS).toFixed(2)} jobs/s`,
        `ceiling ${(CAP / (LATENCY_MS / 1000)).toFixed(2)} jobs/s (${CAP} slots, ${LATENCY_MS / 1000} s a call)`,
      ],
      ...batchDoneMs.map(
        (d, i) =>
          [
            `batch ${i + 1} of ${PER_BATCH}: settled after`,
            d === null ? "unsettled" : `${(d / 1000).toFixed(1)} s`,
            "",
          ] as [string, string, string],
      ),
    ];
    const md = [
      "# Provider gate fairness",
      "",
      `Generated ${new Date().toISOString()} by \`npm run bench:fairness\` on ${availableParallelism()} cores, one run.`,
      "",
      `Machine load at the start: ${fmt(load)}; at the end: ${fmt(loadEnd)} (1 / 5 / 15 min).`,
      "",
      `PROVIDER_CAP = ${CAP}; the provider emulator answers every call after ${LATENCY_MS / 1000} s. ${BATCHES} users`,
      `each start a batch of ${PER_BATCH} (no plan: 4 of their jobs at the gate at once); once ${CAP} calls are in`,
      "flight and a second has passed, a fourth user stages one photo. docs/decisions/0186-one-provider-gate.md.",
      "",
      "| figure | value | budget |",
      "|---|---:|---|",
      ...rows.map(([a, b, c]) => `| ${a} | ${b} | ${c} |`),
      "",
    ].join("\n");
    writeFileSync(fileURLToPath(new URL("./results/report-fairness.md", import.meta.url)), md);
    console.log(md);
    await emulator({ mode: "ok", latencyMs: 0 });
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
