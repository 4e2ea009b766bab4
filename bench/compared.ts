import { type Figure, VS_BASELINE } from "./report.ts";

// A comparison's rows and report (bench/compare.ts runs it): pure functions, so the unit tests hold them.

export interface Turn {
  side: string;
  module: string;
  round: number;
  loadStart: number;
  loadEnd: number;
  seconds: number;
}

export interface ComparedRow {
  group: string;
  name: string;
  unit: string;
  base?: Figure;
  work?: Figure;
  /** The working tree's median over the revision's. */
  ratio?: number;
  /** The rounds' own ratios (round i of the working tree over round i of the revision). */
  roundRatios?: number[];
  rule?: { op: "<=" | ">="; ratio: number };
  pass?: boolean;
}

/** Pairs each figure of the two sides by name; ratios and judgements for the figures of VS_BASELINE. */
export function compareFigures(base: Figure[], work: Figure[]): ComparedRow[] {
  const rows = new Map<string, ComparedRow>();
  for (const f of base) rows.set(f.name, { group: f.group, name: f.name, unit: f.unit, base: f });
  for (const f of work) {
    const row = rows.get(f.name) ?? { group: f.group, name: f.name, unit: f.unit };
    row.work = f;
    row.group = f.group;
    rows.set(f.name, row);
  }
  for (const row of rows.values()) {
    const { base: b, work: w } = row;
    if (!b || !w || b.invalid || w.invalid || b.value === 0) continue;
    row.ratio = Math.round((w.value / b.value) * 1000) / 1000;
    const n = Math.min(b.samples?.length ?? 0, w.samples?.length ?? 0);
    row.roundRatios = Array.from({ length: n }, (_, i) => w.samples![i]! / b.samples![i]!).filter(Number.isFinite);
    const rule = VS_BASELINE[row.name];
    if (rule) {
      row.rule = rule;
      row.pass = rule.op === "<=" ? row.ratio <= rule.ratio : row.ratio >= rule.ratio;
    }
  }
  return [...rows.values()];
}

export function figureText(f: Figure | undefined): string {
  if (!f) return "—";
  if (f.invalid) return `invalid (${f.invalid})`;
  const spread = f.min !== undefined ? ` [${f.min}–${f.max}]` : "";
  return `${f.value}${f.unit ? ` ${f.unit}` : ""}${spread}`;
}

export function ratioText(row: ComparedRow): string {
  if (row.ratio === undefined) return "—";
  const rr = row.roundRatios ?? [];
  const spread = rr.length > 0 ? ` (rounds ${Math.min(...rr).toFixed(2)}–${Math.max(...rr).toFixed(2)}x)` : "";
  return `${row.ratio.toFixed(2)}x${spread}`;
}

export function judgement(row: ComparedRow): string {
  const own = row.work?.invalid ? "**invalid**" : row.work?.pass === false ? "own budget **over**" : "";
  const vs = row.rule ? `${row.rule.op} ${row.rule.ratio}x: ${row.pass ? "ok" : "**over**"}` : "";
  return [vs, own].filter(Boolean).join("; ");
}

export function renderComparison(report: {
  generatedAt: string;
  durationSeconds: number;
  against: { asked: string; sha: string; subject: string; prerendered?: boolean };
  workingTree: string;
  modules: string[];
  rounds: number;
  cores: number;
  turns: Turn[];
  rows: ComparedRow[];
}): string {
  const base = `${report.against.sha.slice(0, 7)}`;
  const lines = [
    `# Benchmark comparison: the ${report.workingTree} against ${base}`,
    "",
    `Generated ${report.generatedAt} by \`npm run bench -- --against ${report.against.asked}\` in ${report.durationSeconds} s on ${report.cores} cores; modules ${report.modules.join(", ")}; ${report.rounds} rounds, each round the revision's turn then the working tree's (a sampled module's calls alternating ABBA), never at once (docs/decisions/0225).`,
    "",
    `${base}: ${report.against.subject}`,
    "",
    ...(report.against.prerendered === false
      ? [
          `**${base}'s build has no prerendered public pages** (its prerender timed out on a loaded machine): its ssr, bundle and lighthouse figures are not comparable.`,
          "",
        ]
      : []),
    "Each side's figure is the median of its rounds [min–max]; the ratio is the working tree's median over the revision's, with the spread of the rounds' own ratios (round i over round i). Ratios with a rule are judged; a figure's own budget is judged on the working tree.",
    "",
  ];
  const loads = (side: string) =>
    report.turns
      .filter((t) => t.side.startsWith(side))
      .map((t) => `${t.loadStart.toFixed(1)}→${t.loadEnd.toFixed(1)}`)
      .join(", ");
  const busiest = Math.max(...report.turns.map((t) => Math.max(t.loadStart, t.loadEnd)), 0);
  lines.push(
    `Machine load (1-minute average) at the start and end of each turn, in order: ${base}: ${loads(base)}; working tree: ${loads("working tree")}.${
      busiest >= 1
        ? " **The machine was busy: the timed figures are pessimistic; the ratios taken in turns are what to read.**"
        : ""
    }`,
    "",
  );
  for (const group of [...new Set(report.rows.map((r) => r.group))]) {
    lines.push(`## ${group}`, "", `| figure | ${base} | working tree | ratio | judged |`, "|---|---:|---:|---:|---|");
    for (const r of report.rows.filter((x) => x.group === group))
      lines.push(`| ${r.name} | ${figureText(r.base)} | ${figureText(r.work)} | ${ratioText(r)} | ${judgement(r)} |`);
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
