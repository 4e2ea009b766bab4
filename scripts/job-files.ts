// The files one staged photo touches (issue 48): the runtime import closure of the route that starts a job, the user
// object's job runner (the provider call and the credit's commit) and the check Worker. Type-only imports are left
// out: the build erases them. docs/architecture.md lists the set between its job-files markers.
//
//   node scripts/job-files.ts           check: the list in docs/architecture.md is the computed one (run by lint)
//   node scripts/job-files.ts --write   rewrite that list
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOTS, resolve, root, walk } from "./check-layers.ts";

export const ENTRIES: Record<string, string> = {
  "workers/api/jobs.ts": "the route that starts a job (POST /api/photos/:id/jobs)",
  "workers/objects/user/jobs/runner.ts": "the user object's runner: the provider call, the check, the credit's commit",
  "workers/checker/index.ts": "the check Worker",
};

/** Issue 48's goal for the set; the count today is above it, and the ceiling below keeps it from growing. */
export const GOAL = 30;
export const CEILING = 89;

const DOC = join(root, "docs", "architecture.md");
const START = "<!-- job-files:start -->";
const END = "<!-- job-files:end -->";

// `import … from "x"`, `export … from "x"` and `import "x"`, but not `import type` / `export type`; and `import("x")`.
const RUNTIME_IMPORT =
  /(?:^|\n)[ \t]*(?:import|export)[ \t]+(?!type\b)(?:[^"';]*?\bfrom[ \t]*)?["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** The files `file` imports at run time, resolved among `files`. */
export function runtimeImports(file: string, text: string, files: Set<string>): string[] {
  return [...text.matchAll(RUNTIME_IMPORT)].flatMap((m) => resolve(file, (m[1] ?? m[2])!, files) ?? []);
}

/** Every file reachable from `entries` by run-time imports, sorted. */
export function closure(entries: string[], read: (f: string) => string, files: Set<string>): string[] {
  const seen = new Set<string>();
  const stack = [...entries];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (seen.has(f) || !files.has(f)) continue;
    seen.add(f);
    stack.push(...runtimeImports(f, read(f), files));
  }
  return [...seen].sort();
}

/** What a file says it holds: the first sentence of its first top-level comment, or nothing. */
export function summary(text: string): string {
  const block = /(?:^|\n)((?:\/\/[^\n]*\n)+)/.exec(text)?.[1];
  const doc = /(?:^|\n)\/\*\*([\s\S]*?)\*\//.exec(text)?.[1];
  const raw = (
    block
      ? block.replace(/^\/\/ ?/gm, "").replace(/\n/g, " ")
      : (doc?.replace(/^\s*\* ?/gm, "").replace(/\n/g, " ") ?? "")
  ).replace(/\s+/g, " ");
  // References to other files are left out (a cut one would name a path that does not exist).
  const sentence = (raw.trim().split(/(?<=\.)\s/)[0] ?? "").replace(/\s*\([^()]*\/[^()]*\)/g, "");
  if (sentence.length <= 110) return sentence;
  const cut = sentence.slice(0, 107);
  return `${cut.slice(0, cut.lastIndexOf(" ")).replace(/[\s,;:(]+$/, "")}…`;
}

export function listing(set: string[], read: (f: string) => string): string {
  const lines = set.map((f) => {
    const s = summary(read(f));
    return s ? `- \`${f}\`: ${s.replace(/`/g, "'")}` : `- \`${f}\``;
  });
  return [
    START,
    `${set.length} files (issue 48's goal: at most ${GOAL}), from ${Object.keys(ENTRIES).length} entries: ${Object.entries(
      ENTRIES,
    )
      .map(([f, why]) => `\`${f}\` (${why})`)
      .join("; ")}. Written by \`node scripts/job-files.ts --write\`.`,
    "",
    ...lines,
    END,
  ].join("\n");
}

if (import.meta.main) {
  const read = (f: string) => readFileSync(join(root, f), "utf8");
  const files = new Set(ROOTS.flatMap((r) => walk(r)));
  const set = closure(Object.keys(ENTRIES), read, files);
  const doc = readFileSync(DOC, "utf8");
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) {
    console.error(`job-files: docs/architecture.md has no ${START} … ${END} section`);
    process.exit(1);
  }
  const wanted = listing(set, read);
  if (process.argv.includes("--write")) {
    writeFileSync(DOC, doc.slice(0, from) + wanted + doc.slice(to + END.length));
    console.log(`job-files: ${set.length} files written to docs/architecture.md`);
  } else {
    const problems: string[] = [];
    if (doc.slice(from, to + END.length) !== wanted)
      problems.push("docs/architecture.md's list is not the computed one: run `node scripts/job-files.ts --write`");
    if (set.length > CEILING)
      problems.push(`${set.length} files on a staged photo's way, more than the ceiling of ${CEILING}`);
    if (problems.length > 0) {
      for (const p of problems) console.error(`job-files: ${p}`);
      process.exit(1);
    }
    console.log(`job-files: ${set.length} files on a staged photo's way (goal ${GOAL}, ceiling ${CEILING})`);
  }
}
