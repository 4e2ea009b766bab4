// Short, dated decisions (issue 48): every ADR in docs/decisions/ says when it was decided and where it stands (a
// "Status:" and a YYYY-MM-DD date within its first lines: Accepted, Superseded by N, or what part of it is), and no
// two ADRs share a number (parallel work once handed out 0316 twice). And they stay short (issue 48 item 4, the
// template's rule): no ADR that still stands is over 900 words, and the median of those that stand is under 350.
// "Words" are whitespace-separated tokens of the whole file outside HTML comments (what `wc -w` counts for a file
// without one), the same for every ADR. An ADR "stands" unless its status starts "Superseded": one superseded only in
// part ("Accepted; its fence superseded by 0323") still stands and still counts, since the rest of it is in force.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const DIR = join(import.meta.dirname, "..", "docs", "decisions");

/** The closed set of statuses (the template's); "Superseded" names what supersedes it, or which part. */
export const STATUSES = ["proposed", "accepted", "superseded", "deprecated"];

/** What is wrong with one ADR's text (its file name for the message), or nothing. */
export function decisionProblems(file: string, text: string): string[] {
  const head = text.split("\n").slice(0, 10).join("\n");
  const out: string[] = [];
  if (!/^# \d{4} /.test(head)) out.push(`${file}: the title must start "# NNNN "`);
  const status = /\bStatus:\s*(\S+)/.exec(head)?.[1]?.replace(/[.,;]$/, "");
  if (!status) out.push(`${file}: no "Status:" in its first lines`);
  else if (!STATUSES.includes(status.toLowerCase()))
    out.push(`${file}: status "${status}" is not one of ${STATUSES.join(", ")} (docs/decisions/0000-template.md)`);
  if (!/\b20\d\d-[01]\d-[0-3]\d\b/.test(head)) out.push(`${file}: no date (YYYY-MM-DD) in its first lines`);
  return out;
}

/** The largest word count an ADR that stands may have, and the bound its median stays under (the template's). */
export const MAX_WORDS = 900;
export const MEDIAN_UNDER = 350;

/** Whitespace-separated tokens outside HTML comments. */
export function wordCount(text: string): number {
  return text
    .replace(/<!--[\s\S]*?-->/g, " ")
    .split(/\s+/)
    .filter(Boolean).length;
}

/** An ADR stands unless its status (the first word after "Status:") is "Superseded"; a partial supersession stands. */
export function stands(text: string): boolean {
  const head = text.split("\n").slice(0, 10).join("\n");
  return !/\bStatus:\s*superseded\b/i.test(head);
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return 0;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The length rule over the ADRs that stand: each one's words (by file), none over 900, their median under 350. */
export function lengthProblems(words: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [file, n] of words) if (n > MAX_WORDS) out.push(`${file}: ${n} words, over ${MAX_WORDS}`);
  const mid = median([...words.values()]);
  if (mid >= MEDIAN_UNDER) out.push(`the median ADR that stands has ${mid} words, not under ${MEDIAN_UNDER}`);
  return out;
}

export function duplicateNumbers(files: string[]): string[] {
  const seen = new Map<string, string>();
  const out: string[] = [];
  for (const f of files) {
    const n = f.slice(0, 4);
    const other = seen.get(n);
    if (other) out.push(`${f}: number ${n} is also ${other}`);
    else seen.set(n, f);
  }
  return out;
}

if (import.meta.main) {
  const files = readdirSync(DIR)
    .filter((f) => /^\d{4}-.*\.md$/.test(f) && !f.startsWith("0000-"))
    .sort();
  const texts = new Map(files.map((f) => [f, readFileSync(join(DIR, f), "utf8")]));
  const words = new Map([...texts].filter(([, t]) => stands(t)).map(([f, t]) => [f, wordCount(t)]));
  const problems = [
    ...duplicateNumbers(files),
    ...files.flatMap((f) => decisionProblems(f, texts.get(f) ?? "")),
    ...lengthProblems(words),
  ];
  if (problems.length) {
    console.error(`check-decisions: ${problems.length} problem(s):`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  const [longest, most] = [...words].reduce((a, b) => (b[1] > a[1] ? b : a), ["", 0]);
  console.log(
    `check-decisions: ${files.length} ADRs, each dated with a status, no number twice; ${words.size} stand, ` +
      `median ${median([...words.values()])} words, longest ${longest} (${most})`,
  );
}
