import { spawnSync } from "node:child_process";
import { missingPictures, pairSetDir, readManifest } from "./structure-pairs.ts";

// `npm test`'s step for the structure check on real pairs (ADR 0220): the evaluation runs when the set's folder holds
// every picture of the manifest; otherwise the run says so, every time.
const pairs = readManifest();
const missing = missingPictures(pairSetDir(), pairs);
if (missing.length > 0) {
  console.log(
    `REAL PAIRS NOT JUDGED: ${missing.length} of ${2 * pairs.length} pictures of test/fixtures/structure-real/pairs.jsonl ` +
      `are not in ${pairSetDir()} (set STRUCTURE_PAIRS_DIR, or materialize them: node scripts/structure-pairs.ts ` +
      "materialize <mirrors> <out>). The structure check was not judged on real pairs in this run.",
  );
  process.exit(0);
}
const run = spawnSync("npx", ["vitest", "run", "--config", "vitest.real-pairs.config.ts"], { stdio: "inherit" });
process.exit(run.status ?? 1);
