// Fails when folders of app/, workers/ and db/ import each other in a circle.
// Biome's noRestrictedImports (biome.json) says which folder may import which;
// this check catches a cycle between folders that the per-folder rules alone
// would let through (e.g. two sibling folders importing each other).
// Run by `npm run lint`; see docs/architecture.md.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const root = join(dirname(new URL(import.meta.url).pathname), "..");
const ROOTS = ["app", "workers", "db"];
const ALIASES: [string, string][] = [
  ["~/", "app/"],
  ["@workers/", "workers/"],
  ["@db/", "db/"],
];

/** The folder a file belongs to, for the cycle check: app/routes, workers/services, db, … */
export function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "db") return "db";
  if (parts.length <= 2) return parts[0]!; // app/root.tsx, workers/app.ts: the entry files
  return `${parts[0]}/${parts[1]}`;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const path = `${dir}/${name}`;
    if (name.startsWith(".") || name === "node_modules") continue;
    if (statSync(join(root, path)).isDirectory()) walk(path, out);
    else if (/\.(ts|tsx)$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

function resolve(from: string, spec: string, files: Set<string>): string | null {
  let base: string | null = null;
  if (spec.startsWith(".")) base = normalize(join(dirname(from), spec));
  else for (const [alias, dir] of ALIASES) if (spec.startsWith(alias)) base = dir + spec.slice(alias.length);
  if (base === null) return null;
  base = base.split("?")[0]!;
  for (const c of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) if (files.has(c)) return c;
  return null;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

export function folderGraph(files: string[], read: (f: string) => string): Map<string, Map<string, string>> {
  const set = new Set(files);
  const graph = new Map<string, Map<string, string>>();
  for (const file of files) {
    const from = unitOf(file);
    for (const m of read(file).matchAll(IMPORT)) {
      const target = resolve(file, m[1]!, set);
      if (!target) continue;
      const to = unitOf(target);
      if (to === from || to === "app" || to === "workers") continue; // entries are roots, never imported back
      if (!graph.has(from)) graph.set(from, new Map());
      if (!graph.get(from)!.has(to)) graph.get(from)!.set(to, `${file} -> ${target}`);
    }
  }
  return graph;
}

/** Every cycle between folders, each as its list of edges (with one example import per edge). */
export function folderCycles(graph: Map<string, Map<string, string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (state.get(next) === "open") {
        const loop = stack.slice(stack.indexOf(next));
        cycles.push(loop.map((a, i) => graph.get(a)!.get(loop[(i + 1) % loop.length]!)!));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = ROOTS.flatMap((r) => walk(r));
  const graph = folderGraph(files, (f) => readFileSync(join(root, f), "utf8"));
  const cycles = folderCycles(graph);
  if (cycles.length > 0) {
    console.error("Folders import each other in a circle (docs/architecture.md):");
    for (const c of cycles) console.error(`  ${c.join("\n    then ")}`);
    process.exit(1);
  }
  const edges = [...graph.values()].reduce((n, m) => n + m.size, 0);
  console.log(`layers: ${graph.size} folders, ${edges} folder-to-folder imports, no cycles`);
}
