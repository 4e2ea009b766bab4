import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { makeJpeg } from "../test/fixtures/images.ts";
import { inspector } from "./inspector.ts";
import type { BenchStack } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// A 24-megapixel photo through the public API (POST /api/v1/photos, issue 45 part 4,
// docs/decisions/0210-api-photos-never-decoded-here.md): what the Worker's runtime holds and spends for it. Locally
// workerd enforces no memory limit (a Worker has 128 MB in production), so the figure is read from outside:
//
// - memory: the app's workerd process's resident set at its peak during the request (VmHWM, reset through
//   /proc/<pid>/clear_refs just before) minus its resident set just before, after a garbage collection through
//   wrangler's inspector. Where clear_refs cannot be written, VmRSS sampled every millisecond instead;
// - time: the request's wall time to its 201, and the CPU the app's workerd process spent meanwhile (its isolate, and
//   the stand-in's own isolate and loopback to Node, work production does on Cloudflare's side);
// - the Images stand-in's CPU in wrangler's Node process (sharp): production's Images service, shown to say that
//   the decode happened, and where.
//
// The photo is photo-like (a gradient with noise, 5.5 MB): the Worker holds its bytes (the multipart body, the file,
// the copy handed to the binding, the R2 write), and a solid one would flatter that. Made once (about 12 s).

const WIDTH = 6000;
const HEIGHT = 4000;
let photo: Uint8Array<ArrayBuffer> | null = null;

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Clock ticks per second on Linux. */
const HZ = 100;

function children(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // A process that ended meanwhile.
    }
  }
  return out;
}

/**
 * The app's wrangler dev process tree: its workerd runtime (at any depth) and the rest (the Node processes: wrangler,
 * where miniflare's Images stand-in runs sharp, and any launcher in front of it).
 */
function processTree(root: number): { workerd: number[]; node: number[] } {
  const tree = { workerd: [] as number[], node: [root] };
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of children(pid)) {
      queue.push(child);
      const comm = readFileSync(`/proc/${child}/comm`, "utf8").trim();
      (comm === "workerd" ? tree.workerd : tree.node).push(child);
    }
  }
  return tree;
}

function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Resets the peak resident set of `pid` to its current one; false when this process may not. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** `inspectorPort`: wrangler's inspector for the app, to collect garbage before measuring (skipped without it). */
export async function measureApiPhotoUpload(stack: BenchStack, inspectorPort?: number): Promise<Figure[]> {
  if (!existsSync("/proc")) throw new Error("bench: the API photo figures read /proc (Linux only)");
  const { workerd: runtimes, node } = processTree(stack.pids.app);
  if (runtimes.length === 0) throw new Error(`bench: no workerd process under wrangler (pid ${stack.pids.app})`);
  photo ??= makeJpeg(WIDTH, HEIGHT, 85, 24);
  const user = await createFixtureUser(stack.url, { apiKey: true });
  const form = () => {
    const fd = new FormData();
    fd.set("file", new Blob([photo!], { type: "image/jpeg" }), "whole-floor.jpg");
    return fd;
  };
  if (inspectorPort) {
    const session = await inspector(inspectorPort);
    try {
      await session.send("HeapProfiler.enable");
      await session.send("HeapProfiler.collectGarbage");
    } finally {
      session.close();
    }
  }
  await new Promise((r) => setTimeout(r, 200));
  const rssBefore = runtimes.map((p) => statusKb(p, "VmRSS"));
  const exact = runtimes.every(resetPeak);
  let sampledPeak = sum(rssBefore);
  const sampler = exact
    ? null
    : setInterval(() => {
        sampledPeak = Math.max(sampledPeak, sum(runtimes.map((p) => statusKb(p, "VmRSS"))));
      }, 1);
  const ticksBefore = runtimes.map(cpuTicks);
  const nodeBefore = node.map(cpuTicks);
  const started = performance.now();
  const res = await fetch(`${stack.url}/api/v1/photos`, {
    method: "POST",
    headers: { Authorization: `Bearer ${user.apiKey}` },
    body: form(),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (sampler) clearInterval(sampler);
  if (res.status !== 201) throw new Error(`bench: the 24 MP upload answered ${res.status} ${text.slice(0, 200)}`);
  const stored = JSON.parse(text) as { photo: { width: number; height: number } };
  if (stored.photo.width !== WIDTH || stored.photo.height !== HEIGHT) throw new Error(`bench: stored ${text}`);
  const peakKb = exact ? sum(runtimes.map((p) => statusKb(p, "VmHWM"))) : sampledPeak;
  const growthMb = (peakKb - sum(rssBefore)) / 1024;
  const cpuMs = ((sum(runtimes.map(cpuTicks)) - sum(ticksBefore)) / HZ) * 1000;
  const nodeMs = ((sum(node.map(cpuTicks)) - sum(nodeBefore)) / HZ) * 1000;
  const group = "Public API: a 24-megapixel JPEG (6000 x 4000, 5.5 MB) through POST /api/v1/photos";
  return [
    { group, name: "24 MP API upload: time to the 201", value: Math.round(ms), unit: "ms" },
    {
      group,
      name: "24 MP API upload: the runtime's memory at its peak over before",
      value: Math.round(growthMb * 10) / 10,
      unit: "MB",
      baseline: `workerd's resident set, ${exact ? "VmHWM after clear_refs" : "VmRSS sampled every ms"}; a Worker has 128 MB`,
      ...BUDGETS.apiPhotoMemoryMb,
    },
    { group, name: "24 MP API upload: the runtime's CPU", value: Math.round(cpuMs), unit: "ms" },
    {
      group,
      name: "24 MP API upload: the Images stand-in's CPU in wrangler's Node process (production: Cloudflare's)",
      value: Math.round(nodeMs),
      unit: "ms",
    },
  ];
}
