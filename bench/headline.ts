import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ComparedRow, Turn } from "./compared.ts";
import { figureText, judgement, ratioText } from "./compared.ts";
import type { Figure } from "./report.ts";

// docs/performance.md's headline table (issue 44), written from the reports of two bench runs, never by hand:
//
//   BENCH_ONLY=credits,staging,batch npm run bench -- --against 5232848   # the job's path, in turns with 5232848
//   BENCH_ONLY=ssr,bundle npm run bench                                    # the pages: the library, /dashboard's JS
//
// (the comparison writes report-against-5232848-credits+batch+staging.json: bench/run.ts's order of modules)
//   npm run bench:headline                                                 # this: rewrites the table in the docs
//
// The table goes between the HEADLINE markers of docs/performance.md (added under "## Latest figures" when
// missing), with the date, the machine's load during both runs and every figure's budget; a figure a report lacks
// is written as "not measured", so a run that broke cannot pass for a good one.

const ROOT = join(import.meta.dirname, "..");
const RESULTS = join(ROOT, "bench", "results");
const DOC = join(ROOT, "docs", "performance.md");
export const START = "<!-- headline: written by npm run bench:headline (bench/headline.ts); do not edit by hand -->";
export const END = "<!-- headline end -->";

interface Against {
  generatedAt: string;
  against: { asked: string; sha: string };
  rounds: number;
  turns: Turn[];
  rows: ComparedRow[];
}

interface Full {
  generatedAt: string;
  loadAtStart?: { loadavg: number[]; cores: number };
  figures: Figure[];
}

const row = (cells: string[]) => `| ${cells.join(" | ")} |`;

/** The table's lines from the comparison run (`against`) and the pages' run (`pages`). */
export function headline(against: Against, pages: Full): string[] {
  const base = against.against.sha.slice(0, 7);
  const loads = against.turns.flatMap((t) => [t.loadStart, t.loadEnd]);
  const compared = (name: string) => against.rows.find((r) => r.name === name);
  const page = (name: string) => pages.figures.find((f) => f.name === name);
  const lines = [
    `Generated ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC from two runs: ` +
      `\`BENCH_ONLY=credits,staging,batch npm run bench -- --against ${against.against.asked}\` ` +
      `(${against.generatedAt.slice(0, 16).replace("T", " ")} UTC, ${against.rounds} rounds in turns, load ` +
      `${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}) and \`BENCH_ONLY=ssr,bundle npm run bench\` ` +
      `(${pages.generatedAt.slice(0, 16).replace("T", " ")} UTC, load ${pages.loadAtStart?.loadavg[0]?.toFixed(2) ?? "not recorded"} at its start).`,
    "",
    row(["figure", base, "now", "ratio (rounds)", "budget", "judged"]),
    row(["---", "---:", "---:", "---:", "---", "---"]),
  ];
  const jobRows: [string, string, string][] = [
    [
      "wall time until every photo settled",
      "batch of 40 photos, 2 s a call, 4 at once: wall time",
      "<= 1.05x, <= 1.15x the floor",
    ],
    ["our overhead p50", "staging overhead p50 (job minus the provider's own time)", "<= 1.10x, <= 60 ms"],
    ["our overhead p99", "staging overhead p99", "<= 1.10x, <= 150 ms"],
    ["reservations/s, 1 user", "reservations/s, 1 user", ">= 0.95x"],
    ["reservations/s, 100 users", "reservations/s, 100 users", ">= 0.95x"],
    [
      "results judged by the check Worker (both pictures reduced by the image service)",
      "batch results judged by the check Worker",
      ">= 40",
    ],
    [
      "a plan place empty between a provider call's end and the next job's launch, p50",
      "a plan place empty between calls, p50",
      "",
    ],
  ];
  for (const [name, label, budget] of jobRows) {
    const r = compared(name);
    if (!r) {
      lines.push(row([label, "not measured", "not measured", "", budget, "**not measured**"]));
      continue;
    }
    const floor = r.work?.ratio !== undefined && name.startsWith("wall time") ? `; ${r.work.ratio}x the floor` : "";
    const own = r.work?.budget !== undefined || r.work?.ratioBudget !== undefined ? judgementOf(r.work) : "";
    lines.push(
      row([
        label,
        figureText(r.base),
        `${figureText(r.work)}${floor}`,
        ratioText(r),
        budget,
        [r.rule ? judgement(r) : "", own].filter(Boolean).join("; "),
      ]),
    );
  }
  const pageRows: [string, string, string][] = [
    ["/dashboard gzipped JS", "/dashboard: gzipped JS", "<= 130 KB"],
    ["/dashboard, 60 photos p50", "the 60-photo library p50, to the bare page with a session", "<= 1.6x"],
  ];
  for (const [name, label, budget] of pageRows) {
    const f = page(name);
    const ratio = f?.ratio !== undefined ? `${f.ratio}x` : "";
    lines.push(
      row([label, "", f ? figureText(f) : "not measured", ratio, budget, f ? judgementOf(f) : "**not measured**"]),
    );
  }
  const invalid = [...against.rows.flatMap((r) => [r.base, r.work]), ...pages.figures].filter((f) => f?.invalid);
  lines.push(
    "",
    invalid.length === 0
      ? "No figure of either run is NaN or a zero count of work done."
      : `**Not measurements** (NaN or a zero count of work done): ${invalid.map((f) => f!.name).join("; ")}.`,
  );
  return lines;
}

/** A figure against its own budget, as the bench judged it. */
function judgementOf(f: Figure): string {
  if (f.invalid) return `**invalid** (${f.invalid})`;
  if (f.ratioBudget !== undefined && f.ratio !== undefined) {
    const ok = (f.ratioOp ?? "<=") === "<=" ? f.ratio <= f.ratioBudget : f.ratio >= f.ratioBudget;
    return ok ? "within" : "**OVER**";
  }
  if (f.budget === undefined) return "";
  const ok = f.op === ">=" ? f.value >= f.budget : f.value <= f.budget;
  return ok ? "within" : "**OVER**";
}

/** `doc` with the table between the markers (added under "## Latest figures" when it has none yet). */
export function withHeadline(doc: string, lines: string[]): string {
  const block = [START, ...lines, END].join("\n");
  const at = doc.indexOf(START);
  if (at >= 0) {
    const end = doc.indexOf(END, at);
    if (end < 0) throw new Error(`docs/performance.md: ${START} without ${END}`);
    return `${doc.slice(0, at)}${block}${doc.slice(end + END.length)}`;
  }
  const heading = doc.indexOf("## Latest figures\n");
  if (heading < 0) throw new Error("docs/performance.md: no '## Latest figures' heading to put the table under");
  const after = heading + "## Latest figures\n".length;
  return `${doc.slice(0, after)}\n${block}\n${doc.slice(after)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sha = process.env.BENCH_HEADLINE_AGAINST ?? "5232848";
  // The comparison's file names its modules in bench/run.ts's order (report-against-5232848-credits+batch+staging).
  const file = readdirSync(RESULTS).find(
    (f) =>
      f.startsWith(`report-against-${sha}-`) &&
      f.endsWith(".json") &&
      ["credits", "staging", "batch"].every((m) => f.includes(m)),
  );
  if (!file)
    throw new Error(
      `bench:headline: no bench/results/report-against-${sha}-…credits…staging…batch….json; run the comparison first`,
    );
  const against = JSON.parse(readFileSync(join(RESULTS, file), "utf8")) as Against;
  const pages = JSON.parse(readFileSync(join(RESULTS, "report-ssr+bundle.json"), "utf8")) as Full;
  const lines = headline(against, pages);
  writeFileSync(DOC, withHeadline(readFileSync(DOC, "utf8"), lines));
  // Laid out as the lint's formatter wants it, so a fresh table never turns the lint red.
  execFileSync(join(ROOT, "node_modules", ".bin", "biome"), ["format", "--write", DOC], { stdio: "ignore" });
  console.log(lines.join("\n"));
  console.log("\nWrote docs/performance.md's headline table.");
}
