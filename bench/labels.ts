import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { makeJpeg } from "../test/fixtures/images.ts";
import { inspector, type Profile } from "./inspector.ts";
import type { BenchContext, BenchModule } from "./module.ts";
import { OBJECT_INSPECTOR_PORT } from "./object.ts";
import { BUDGETS } from "./report.ts";

// The disclosure label's CPU on the Worker (issue 46 part 2, docs/decisions/0250-labels-drawn-by-images.md): a
// California listing of PACK_PHOTOS photos, each with a 2304 x 1536 staged result (a gradient with noise, about
// 800 KB, the size the provider's upscale returns), labelled with its statement, the original's address and a QR
// code. Cold every run: the labels' cache (R2, per version and label) is cleared first through the dev API, so every
// label is rendered again.
//
// - CPU per label: SINGLES single downloads (GET …/labelled), one after another; the app isolate's busy time over
//   them, divided by SINGLES.
// - CPU per cold pack: one POST /api/folders/:id/pack of the whole listing, the ZIP read to its end: every label
//   rendered, every original and result streamed through the ZIP writer (its CRC-32 is JavaScript).
//
// The app isolate's busy time is a V8 CPU profile of the app's Worker through wrangler's inspector, every sample
// that is not idle (gaps capped at twice the interval, as bench/object.ts counts): the Worker's own CPU, what the
// platform's limit counts. Beside it, the CPU of every workerd process of this stack from /proc: an upper bound that
// also carries the local D1 and R2 simulators (production's are elsewhere). Locally the Images stand-in cannot draw,
// so the draw goes to the local images emulator in this bench's own Node process (emulators/images-draw.ts), which
// stands where production's Images service is; its count of draws proves every label was rendered.

const PACK_PHOTOS = 100;
const SINGLES = 10;
const INTERVAL_US = 100;
/** Clock ticks per second on Linux. */
const HZ = 100;
const GROUP = `Disclosure labels on the Worker, cold (a California listing of ${PACK_PHOTOS} photos, 2304 x 1536 results)`;

interface Fixture {
  userId: string;
  cookie: string;
  folderId: string;
  /** "photoId/versionId" of each result. */
  versions: string[];
}

let fixture: Fixture | null = null;

/** The app isolate's busy time in ms: every sample that is not idle. */
export function busyMs(profile: Profile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let us = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    if (idle.has(profile.samples[i]!)) continue;
    us += Math.min(profile.timeDeltas[i + 1] ?? 0, 2 * INTERVAL_US);
  }
  return us / 1000;
}

/** The workerd processes started under this process (the app's and the check Worker's wrangler dev). */
function workerdUnder(root: number): number[] {
  const parents = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.split(") ")[1]!.split(" ")[1]));
      comm.set(Number(name), readFileSync(`/proc/${name}/comm`, "utf8").trim());
    } catch {
      // A process that ended meanwhile.
    }
  }
  const under = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === root) return true;
    return false;
  };
  return [...comm].filter(([pid, c]) => c === "workerd" && under(pid)).map(([pid]) => pid);
}

function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Ended.
    }
  }
  return (ticks / HZ) * 1000;
}

async function dev(ctx: BenchContext, method: string, path: string, body?: Uint8Array) {
  const res = await fetch(`${ctx.stack.url}/api/dev${path}`, {
    method,
    headers: { Origin: ctx.stack.url },
    ...(body ? { body: body as Uint8Array<ArrayBuffer> } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`bench: ${method} /api/dev${path} answered ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function draws(ctx: BenchContext): Promise<number> {
  const port = ctx.stack.ports.images;
  if (!port) throw new Error("bench: the stack has no images emulator");
  const res = await fetch(`http://127.0.0.1:${port}/_emulator/draws`);
  return ((await res.json()) as unknown[]).length;
}

async function pack(ctx: BenchContext, f: Fixture): Promise<number> {
  const res = await fetch(`${ctx.stack.url}/api/folders/${f.folderId}/pack`, {
    method: "POST",
    headers: { Cookie: f.cookie, Origin: ctx.stack.url, "Content-Type": "application/x-www-form-urlencoded" },
    body: "publish=new",
  });
  if (res.status !== 200) throw new Error(`bench: the pack answered ${res.status} ${(await res.text()).slice(0, 200)}`);
  return (await res.arrayBuffer()).byteLength;
}

async function label(ctx: BenchContext, f: Fixture, version: string): Promise<void> {
  const [photoId, versionId] = version.split("/");
  const res = await fetch(`${ctx.stack.url}/api/photos/${photoId}/versions/${versionId}/labelled`, {
    headers: { Cookie: f.cookie },
  });
  if (res.status !== 200) throw new Error(`bench: a label answered ${res.status} ${(await res.text()).slice(0, 200)}`);
  await res.arrayBuffer();
}

/** `work` under the app isolate's CPU profile and /proc: the isolate's busy ms and all of workerd's. */
async function measured(work: () => Promise<void>): Promise<{ isolate: number; workerd: number; wall: number }> {
  const pids = workerdUnder(process.pid);
  if (pids.length === 0) throw new Error("bench: no workerd process under this bench");
  const session = await inspector(OBJECT_INSPECTOR_PORT);
  try {
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: INTERVAL_US });
    await session.send("Profiler.start");
    const before = cpuMs(pids);
    const t = performance.now();
    await work();
    const wall = performance.now() - t;
    const workerd = cpuMs(pids) - before;
    const { profile } = await session.send<{ profile: Profile }>("Profiler.stop");
    await session.send("Profiler.disable");
    return { isolate: busyMs(profile), workerd, wall };
  } finally {
    session.close();
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export function labelsModule(): BenchModule {
  return {
    title: `Disclosure labels, cold: CPU per label and per ${PACK_PHOTOS}-photo listing pack`,
    async setup(ctx) {
      const user = await createFixtureUser(ctx.stack.url, { credits: 0 });
      if (!user.sessionToken) throw new Error("bench: the fixture user came without a session");
      const photo = makeJpeg(2304, 1536, 85, 24, 11);
      const seeded = await dev(ctx, "POST", `/bench/listing/${user.id}?photos=${PACK_PHOTOS}`, photo);
      fixture = {
        userId: user.id,
        cookie: `sw_session=${user.sessionToken}`,
        folderId: String(seeded.folderId),
        versions: seeded.versions as string[],
      };
      // Warm: the code compiled, the original pages published (the pack's POST publishes those never made).
      await pack(ctx, fixture);
    },
    async measure(ctx) {
      const f = fixture;
      if (!f) throw new Error("bench: no listing (setup did not run)");
      const load = loadavg()[0]!;
      await dev(ctx, "DELETE", `/bench/labels/${f.userId}`);
      let drawn = await draws(ctx);
      const singles = await measured(async () => {
        for (const v of f.versions.slice(0, SINGLES)) await label(ctx, f, v);
      });
      if ((await draws(ctx)) - drawn !== SINGLES) throw new Error("bench: the single labels were not all drawn");
      await dev(ctx, "DELETE", `/bench/labels/${f.userId}`);
      drawn = await draws(ctx);
      let zipBytes = 0;
      const whole = await measured(async () => {
        zipBytes = await pack(ctx, f);
      });
      const packDrawn = (await draws(ctx)) - drawn;
      if (packDrawn !== PACK_PHOTOS) throw new Error(`bench: the pack drew ${packDrawn} labels, not ${PACK_PHOTOS}`);
      const note = `load average ${load.toFixed(2)} at the run's start; all of workerd (with the local D1/R2 simulators)`;
      return [
        {
          group: GROUP,
          name: "CPU per label, a single Download for MLS (the app isolate)",
          value: round1(singles.isolate / SINGLES),
          unit: "ms",
          baseline: `${SINGLES} labels one after another; ${note} ${round1(singles.workerd / SINGLES)} ms a label, wall ${Math.round(singles.wall / SINGLES)} ms; before (jpeg-js on the request, ADR 0161): 734 ms`,
          ...BUDGETS.labelCpuMs,
        },
        {
          group: GROUP,
          name: `CPU per cold ${PACK_PHOTOS}-photo listing pack (the app isolate)`,
          value: Math.round(whole.isolate),
          unit: "ms",
          baseline: `${PACK_PHOTOS} labels drawn, ${(zipBytes / 1e6).toFixed(0)} MB of ZIP; ${note} ${Math.round(whole.workerd)} ms, wall ${Math.round(whole.wall)} ms; the Worker's limit is 30,000 ms`,
          ...BUDGETS.labelPackCpuMs,
        },
        {
          group: GROUP,
          name: `CPU per label within the cold pack (the app isolate, the pack's CPU over ${PACK_PHOTOS})`,
          value: round1(whole.isolate / PACK_PHOTOS),
          unit: "ms",
          baseline: "each label with its photo's original and result streamed into the ZIP",
        },
      ];
    },
  };
}
