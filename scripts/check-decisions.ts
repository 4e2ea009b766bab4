// Short, dated decisions (issue 48): every ADR in docs/decisions/ says when it was decided and where it stands (a
// "Status:" and a YYYY-MM-DD date within its first lines: Accepted, Superseded by N, or what part of it is), and no
// two ADRs share a number (parallel work once handed out 0316 twice).
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
  const problems = [
    ...duplicateNumbers(files),
    ...files.flatMap((f) => decisionProblems(f, readFileSync(join(DIR, f), "utf8"))),
  ];
  if (problems.length) {
    console.error(`check-decisions: ${problems.length} problem(s):`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(`check-decisions: ${files.length} ADRs, each dated with a status, no number twice`);
}
