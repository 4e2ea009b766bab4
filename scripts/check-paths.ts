// Paths that cannot rot (issue 48): a code comment, an ADR or a doc that names a repository path which does not exist
// fails `npm run lint`. A path counts when it starts at the repository's top (app/, workers/, db/, migrations/, public/,
// test/, bench/, scripts/, emulators/, docs/, .ci/) and names a tracked file or folder, or the start of one's name
// (`docs/decisions/0160` for its ADR, `workers/http/body` for body.ts). A deliberate name of something gone (a superseded
// ADR naming what it removed, a folder the bench writes) is followed, after its closing backtick if any, by "(gone" —
// `workers/old.ts` (gone: now x.ts) — or by "(written by" for output that is not tracked. URL paths start with "/" and are not read.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const TOPS = ["app", "workers", "db", "migrations", "public", "test", "bench", "scripts", "emulators", "docs", ".ci"];
const PATH = new RegExp(
  `(?<![\\w./@~:-])((?:${TOPS.map((t) => t.replace(".", "\\.")).join("|")})/[\\w\\-./$+]*\\w)`,
  "g",
);
const MARKERS = [" (gone", " (written by"];

/** Whether `path` names a tracked file or folder, or the start of a tracked name (`sorted`: every tracked path, sorted). */
export function exists(path: string, tracked: Set<string>, folders: Set<string>, sorted: string[]): boolean {
  if (tracked.has(path) || folders.has(path)) return true;
  // The start of a tracked name: an ADR by its number, a module without its extension.
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < path) lo = mid + 1;
    else hi = mid;
  }
  const next = sorted[lo];
  return next?.startsWith(path) === true && /[.\-_]/.test(next[path.length] ?? "");
}

/** The text of a line a reader takes for prose: a comment's in code, the whole line in Markdown. */
function prose(file: string, line: string): string | null {
  if (file.endsWith(".md")) return line;
  const t = line.trimStart();
  if (t.startsWith("*") || t.startsWith("/*") || t.startsWith("//")) return line;
  const at = line.indexOf("// ");
  return at >= 0 ? line.slice(at) : null;
}

/** Every name of a path that does not exist in `files` (tracked paths), as "file:line: path". */
export function pathProblems(files: string[], read: (file: string) => string): string[] {
  const tracked = new Set(files);
  const folders = new Set<string>();
  for (const f of files) {
    const parts = f.split("/");
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join("/"));
  }
  const sorted = [...files].sort();
  const missing: string[] = [];
  for (const file of files) {
    if (!/\.(md|ts|tsx)$/.test(file) || file.startsWith("bench/results/")) continue;
    const lines = read(file).split("\n");
    lines.forEach((line, i) => {
      const text = prose(file, line);
      if (text === null) return;
      for (const m of text.matchAll(PATH)) {
        const path = m[1]!.replace(/\.+$/, "");
        if (path.includes("$") || exists(path, tracked, folders, sorted)) continue;
        const after = text.slice(m.index + m[0].length).replace(/^[`/]+/, "");
        if (MARKERS.some((k) => after.startsWith(k))) continue;
        missing.push(`${file}:${i + 1}: ${path}`);
      }
    });
  }
  return missing;
}

/** A timing: a number of milliseconds. */
const TIMING = /\b\d+(?:\.\d+)?\s?ms\b/;

/**
 * Timings written into the comments of app/ and workers/ (issue 48 item 3): a comment says why; a measured figure
 * lives in a bench report or an ADR, which the comment names. As "file:line: the comment".
 */
export function figureProblems(files: string[], read: (file: string) => string): string[] {
  const out: string[] = [];
  for (const file of files) {
    if (!/^(app|workers)\/.*\.tsx?$/.test(file) || file.endsWith("worker-configuration.d.ts")) continue;
    read(file)
      .split("\n")
      .forEach((line, i) => {
        const text = prose(file, line);
        if (text !== null && TIMING.test(text)) out.push(`${file}:${i + 1}: ${text.trim()}`);
      });
  }
  return out;
}

if (import.meta.main) {
  const files = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);
  const missing = pathProblems(files, (f) => readFileSync(join(ROOT, f), "utf8"));
  if (missing.length) {
    console.error(
      `check-paths: ${missing.length} name(s) of paths that do not exist (fix the path, or follow a deliberate one with "(gone"):`,
    );
    for (const m of missing) console.error(`  ${m}`);
    process.exit(1);
  }
  const figures = figureProblems(files, (f) => readFileSync(join(ROOT, f), "utf8"));
  if (figures.length) {
    console.error(
      `check-paths: ${figures.length} timing(s) in code comments (say why; put the figure in a bench report or an ADR and name it):`,
    );
    for (const f of figures) console.error(`  ${f}`);
    process.exit(1);
  }
  console.log(
    `check-paths: every repository path named in ${files.length} tracked files exists; no timing in a comment`,
  );
}
