import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { jobEnded } from "./api.ts";
import {
  IMAGES_CALL_MS,
  type JobSplit,
  providerLog,
  recordedJobs,
  recordsTimings,
  splitFigures,
  splitJob,
} from "./job-split.ts";
import { type BenchModule, percentile } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// Staging overhead (moved out of bench/run.ts): single stagings one after another against the provider emulator at
// 300 ms, each job's time against its own provider call's time; and where each job's time went (bench/job-split.ts).
// BENCH_STAGING_JOBS and BENCH_STAGING_DIRECT make a short run (defaults 20 and 10).
//
// "Our overhead" (issue 44 items 2 and 3) is a job's time beyond the provider's own time and the direct call's
// transport, with the local image service's own time taken out and production's estimate for its calls put in
// (calls x IMAGES_CALL_MS, bench/job-split.ts): what the local stand-in (sharp in wrangler's Node process) costs is
// not ours. The stand-in's time comes from the job's split; a revision that records no split (older ones, whose jobs
// made no image service call before their commit) keeps the job's time as it is, and the report says which.

const JOBS = Number(process.env.BENCH_STAGING_JOBS ?? 20);
const DIRECT_CALLS = Number(process.env.BENCH_STAGING_DIRECT ?? 10);

export const staging: BenchModule = {
  title: `Staging overhead: our end-to-end job time minus the provider emulator's own time (${JOBS} jobs a run), and where each job's time goes`,
  async measure({ stack }) {
    const user = await createFixtureUser(stack.url, { credits: JOBS + 20 });
    const token = user.sessionToken;
    if (!token) throw new Error("bench: fixture user came without a session");
    const [photoId] = await seedPhotos({ baseUrl: stack.url, sessionToken: token }, 1, "Bench room");
    const headers = { Cookie: `sw_session=${token}`, "Content-Type": "application/json", Origin: stack.url };
    const provider = `http://127.0.0.1:${stack.ports.provider}`;
    const LATENCY_MS = 300;
    await fetch(`${provider}/_emulator/mode`, {
      method: "POST",
      body: JSON.stringify({ mode: "ok", latencyMs: LATENCY_MS }),
    });
    try {
      // The same call made directly to the emulator: the time the provider itself takes.
      const original = new Uint8Array(
        await (await fetch(`${stack.url}/api/photos/${photoId}/original`, { headers })).arrayBuffer(),
      );
      // The emulator logs each call's own time (body received to answer written: the configured latency, its image
      // work, which varies by tens of ms from call to call, and its fetch of the input address, which it logs apart
      // as input_fetch_ms); a job's overhead is taken against its own call. The input fetch of a job's call is served
      // by our Worker (the signed address), so it is counted as ours, not as the provider's.
      const providerTimeOfLastCall = async () => {
        const log = (await (await fetch(`${provider}/_emulator/requests`)).json()) as {
          ms?: number;
          input_fetch_ms?: number;
        }[];
        const last = log.at(-1);
        if (typeof last?.ms !== "number") throw new Error("the provider emulator did not log the call's time");
        return last.ms - (last.input_fetch_ms ?? 0);
      };
      // The direct call's input is served by this process, as a client of the provider would serve its own photo.
      const source = createServer((_req, res) => res.writeHead(200, { "Content-Type": "image/jpeg" }).end(original));
      await new Promise<void>((r) => source.listen(0, "127.0.0.1", () => r()));
      const sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/room.jpg`;
      const direct: number[] = [];
      const directOwn: number[] = [];
      const directTransport: number[] = [];
      for (let i = 0; i < DIRECT_CALLS; i++) {
        const t = performance.now();
        // The documented call, then the download of the result it names: what a direct client of the provider does.
        const res = await fetch(`${provider}/generate_designs_for_room`, {
          method: "POST",
          headers: { Authorization: `Bearer ${stack.vars.PROVIDER_API_KEY}`, "Content-Type": "application/json" },
          body: JSON.stringify({
            input_image_url: sourceUrl,
            room_type: "bedroom",
            design_style: "scandinavian",
            num_images: 1,
            scale_factor: 3,
          }),
        });
        const answer = (await res.json()) as { info?: { images?: { url?: string; data?: string }[] } };
        const image = answer.info?.images?.[0];
        if (!image) throw new Error(`bench: the direct call answered no image (${res.status})`);
        // Results at an address to download (the emulator since ADR 0151), or inline in the answer (before it: a
        // comparison with an older revision drives that emulator).
        if (image.url) await (await fetch(image.url)).arrayBuffer();
        const took = performance.now() - t;
        const own = await providerTimeOfLastCall();
        direct.push(took);
        directOwn.push(own);
        directTransport.push(took - own);
      }
      source.close();
      const directP50 = percentile(direct, 50);
      const transportP50 = percentile(directTransport, 50);
      /** Per job: its time beyond the provider's own time and the direct call's transport, the stand-in's included. */
      const beyond: number[] = [];
      const unpaired: number[] = [];
      const jobOwn: number[] = [];
      const windows: { jobId: string; start: number; end: number }[] = [];
      for (let i = 0; i < JOBS; i++) {
        const t = performance.now();
        const wallStart = Date.now();
        const res = await fetch(`${stack.url}/api/photos/${photoId}/jobs`, {
          method: "POST",
          // As the page sends it (app/lib/use-job.ts): a key of its own, so a resend starts nothing (ADR 0148).
          headers: { ...headers, "Idempotency-Key": crypto.randomUUID() },
          body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "scandinavian" }),
        });
        if (res.status !== 202) throw new Error(`staging job refused: ${res.status} ${await res.text()}`);
        const { job } = (await res.json()) as { job: { id: string } };
        const ended = await jobEnded(stack.url, job.id, headers);
        if (ended.status === "failed") throw new Error(`staging job failed: ${ended.error}`);
        const took = performance.now() - t;
        windows.push({ jobId: job.id, start: wallStart, end: Date.now() });
        const own = await providerTimeOfLastCall();
        jobOwn.push(own);
        // What the job took beyond the direct call: the provider's own time of this job's call out, and the
        // direct call's transport (client to emulator and back, the result's download) out, since it pays them too.
        beyond.push(took - own - transportP50);
        unpaired.push(took - directP50);
      }
      // Where each job's time went (bench/job-split.ts): left out, not faked, on a revision that records none.
      const split: Figure[] = [];
      let splits: JobSplit[] | null = null;
      if (await recordsTimings(stack.url, user.id)) {
        const recorded = await recordedJobs(stack.url, user.id);
        const log = await providerLog(provider);
        splits = windows.map((w) => {
          const r = recorded.get(w.jobId);
          if (!r) throw new Error(`bench: the object kept no timings of job ${w.jobId}`);
          return splitJob(r, log, [w.start, w.end], photoId);
        });
        split.push(...splitFigures("Staging: where a job's time goes", splits, "per job", true));
      } else console.log("  (this revision records no job timings: the staging split is left out)");
      // Our overhead: the local image service's own time out, production's estimate for its calls in.
      const overhead = splits
        ? beyond.map((b, i) => b - splits[i]!.parts.images + splits[i]!.imagesCalls * IMAGES_CALL_MS)
        : beyond;
      const overheadHow = splits
        ? `the local image service's own time replaced by its calls x ${IMAGES_CALL_MS} ms (IMAGES_CALL_MS)`
        : "no job split on this revision: the local image service's own time, if any, is left in";
      return [
        ...split,
        {
          group: "Staging",
          name: "direct emulator call p50 (baseline)",
          value: Math.round(directP50),
          unit: "ms",
          baseline: `configured latency ${LATENCY_MS} ms`,
        },
        {
          group: "Staging",
          name: "the emulator's own time p50 (its input fetch aside), direct calls",
          value: Math.round(percentile(directOwn, 50)),
          unit: "ms",
        },
        {
          group: "Staging",
          name: "the emulator's own time p50 (its input fetch aside), our jobs' calls",
          value: Math.round(percentile(jobOwn, 50)),
          unit: "ms",
        },
        {
          group: "Staging",
          name: "our overhead p50",
          value: Math.round(percentile(overhead, 50)),
          unit: "ms",
          baseline: overheadHow,
          ...BUDGETS.overheadP50,
        },
        {
          group: "Staging",
          name: "our overhead p99",
          value: Math.round(percentile(overhead, 99)),
          unit: "ms",
          baseline: overheadHow,
          ...BUDGETS.overheadP99,
        },
        {
          group: "Staging",
          name: "job time beyond the provider's own time and transport, the local image service included, p50",
          value: Math.round(percentile(beyond, 50)),
          unit: "ms",
        },
        {
          group: "Staging",
          name: "job time minus the direct call's p50 (unpaired) p50",
          value: Math.round(percentile(unpaired, 50)),
          unit: "ms",
        },
      ];
    } finally {
      await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
    }
  },
};
