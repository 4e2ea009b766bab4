// The structure check on two pictures, for support and tests (issue 43, item 8):
//
//   npm run check:structure -- --kind stage|removal|sky SOURCE RESULT [--map]
//
// prints one JSON line {"verdict":"passed"|"flagged"|"refused","score":n,"reasons":[...]} and, with --map, writes
// where the check saw the room change next to RESULT as <RESULT without extension>.changes.png. The pictures go the
// check Worker's way: reduced by the Images binding (wrangler's local stand-in, from the check Worker's own
// wrangler.toml) to 640 px grays, then judged by the same function the Worker calls (judgeGrays, workers/lib/structure/check.ts).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getPlatformProxy } from "wrangler";
import { images } from "../workers/lib/images.ts";
import { changeMapPng } from "../workers/lib/structure/change-map.ts";
import { judgeGrays, REDUCED_EDGE } from "../workers/lib/structure/check.ts";
import type { ResultKind } from "../workers/lib/structure/measures.ts";

const KINDS: ResultKind[] = ["stage", "removal", "sky"];

function usage(message: string): never {
  console.error(`${message}\nusage: npm run check:structure -- --kind stage|removal|sky SOURCE RESULT [--map]`);
  process.exit(2);
}

const args = process.argv.slice(2);
const k = args.indexOf("--kind");
const kind = (k >= 0 ? args[k + 1] : undefined) as ResultKind | undefined;
if (!kind || !KINDS.includes(kind)) usage("--kind must be stage, removal or sky.");
const files = args.filter((a, i) => !a.startsWith("--") && i !== k + 1);
if (files.length !== 2) usage("Give the source and the result.");
const [sourceFile, resultFile] = files as [string, string];

const proxy = await getPlatformProxy<{ IMAGES: ImagesBinding }>({
  configPath: join(import.meta.dirname, "..", "workers", "checker", "wrangler.toml"),
  persist: false,
});
try {
  const service = images(proxy.env.IMAGES, { local: true });
  const read = (f: string) => new Uint8Array(readFileSync(f));
  const [source, result] = await Promise.all([
    service.analysisGray(read(sourceFile), REDUCED_EDGE),
    service.analysisGray(read(resultFile), REDUCED_EDGE),
  ]);
  const judged = judgeGrays(kind, source, result);
  console.log(JSON.stringify({ verdict: judged.verdict, score: judged.score, reasons: judged.reasons }));
  if (args.includes("--map")) {
    const out = `${resultFile.replace(/\.[^./]+$/, "")}.changes.png`;
    writeFileSync(out, changeMapPng(judged.map));
  }
} finally {
  await proxy.dispose();
}
