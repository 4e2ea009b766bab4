import { ROOM_PHOTO, seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { decodeImage, encodeJpeg, resize } from "../test/fixtures/structure/pixels.ts";
import { jobEnded } from "./api.ts";
import { type BenchModule, median } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// What a staged, emptied and sky result is worth to a listing (docs/decisions/0151-provider-as-documented.md):
// the long edge and bytes of each result against the provider emulator, which answers at the provider's sample
// sizes (768x512 staging times scale_factor, 768x576 removal, 768 px skies), and how many provider calls each job
// made to get there. Also what the documented staging call costs us: the provider fetching our signed address of
// a 2560 px photo (the emulator times its own fetch of input_image_url).

const KINDS = [
  { kind: "stage", label: "staged", body: { kind: "stage", roomType: "livingroom", designStyle: "modern" } },
  { kind: "removal", label: "emptied", body: { kind: "removal" } },
  { kind: "sky", label: "sky", body: { kind: "sky", skyType: "dusk" } },
] as const;

interface Version {
  width: number;
  height: number;
  bytes: number;
}

/** The emulator's count of calls answered so far (GET /_emulator/mode reads it without resetting anything). */
async function callsSoFar(provider: string): Promise<number> {
  return ((await (await fetch(`${provider}/_emulator/mode`)).json()) as { calls: number }).calls;
}

/**
 * The provider calls `work` made, and their log entries: counted by the emulator's call counter, never by the length
 * of its request log, which keeps only the last 200 calls. Once a full bench had made 200 (the batch alone makes 120)
 * the log's length stopped growing, and the count taken from it read 0 calls and no fetch time (NaN) for every kind
 * in the full run of 2026-11-27. Nothing else may call the provider meanwhile.
 */
export async function providerCallsDuring<T>(
  provider: string,
  work: () => Promise<T>,
): Promise<{ result: T; made: number; entries: { input_fetch_ms?: number }[] }> {
  const before = await callsSoFar(provider);
  const result = await work();
  const made = (await callsSoFar(provider)) - before;
  const log = (await (await fetch(`${provider}/_emulator/requests`)).json()) as { input_fetch_ms?: number }[];
  return { result, made, entries: made > 0 ? log.slice(-made) : [] };
}

export function resultsModule(): BenchModule {
  let fixture: { cookie: string; photoId: string } | undefined;
  return {
    title: "Provider results at listing size (emulator at the provider's sample sizes)",
    async setup({ stack, fixtureToken }) {
      const token = await fixtureToken(KINDS.length * 5);
      // A phone photo as the browser uploads it: 2560 px on the long edge (ADR 0131). A real room, enlarged: every job
      // checks its result against its room (docs/decisions/0162), and a drawn gradient has no walls to keep.
      const room = decodeImage(ROOM_PHOTO);
      const photo = encodeJpeg(
        resize(room, 2560, Math.round((2560 * room.height) / room.width)),
        85,
      ) as Uint8Array<ArrayBuffer>;
      const [photoId] = await seedPhotos({ baseUrl: stack.url, sessionToken: token }, 1, "Results room", photo);
      fixture = { cookie: `sw_session=${token}`, photoId: photoId! };
    },
    async measure({ stack }) {
      const own = fixture;
      if (!own) throw new Error("bench: results fixture missing");
      const provider = `http://127.0.0.1:${stack.ports.provider}`;
      await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok" }) });
      const headers = { Cookie: own.cookie, "Content-Type": "application/json", Origin: stack.url };
      const group = "Provider results, emulator at the provider's sizes";
      const figures: Figure[] = [];
      const fetches: number[] = [];
      for (const { label, body } of KINDS) {
        const {
          result: job,
          made,
          entries: calls,
        } = await providerCallsDuring(provider, async () => {
          const res = await fetch(`${stack.url}/api/photos/${own.photoId}/jobs`, {
            method: "POST",
            headers,
            body: JSON.stringify({ ...body, sourceVersionId: "original" }),
          });
          if (res.status !== 202)
            throw new Error(`bench: ${label} job not started (${res.status} ${await res.text()})`);
          const { job } = (await res.json()) as { job: { id: string } };
          const ended = await jobEnded(stack.url, job.id, headers);
          if (ended.status !== "succeeded") throw new Error(`bench: ${label} job ${ended.status}: ${ended.error}`);
          return job;
        });
        const answer = (await (await fetch(`${stack.url}/api/jobs/${job.id}`, { headers })).json()) as {
          version: Version;
        };
        for (const c of calls) if (c.input_fetch_ms !== undefined) fetches.push(c.input_fetch_ms);
        const { width, height, bytes } = answer.version;
        figures.push(
          {
            group,
            name: `${label}: long edge`,
            value: Math.max(width, height),
            unit: "px",
            baseline: `${width}x${height}`,
            ...BUDGETS.listingLongEdge,
          },
          { group, name: `${label}: bytes`, value: Math.round(bytes / 1024), unit: "KB" },
          { group, name: `${label}: provider calls per job`, value: made, unit: "calls", nonZero: true },
        );
      }
      figures.push({
        group,
        name: "the provider's fetch of our signed address of a 2560 px photo, p50",
        value: Math.round(median(fetches) * 10) / 10,
        unit: "ms",
      });
      return figures;
    },
  };
}
