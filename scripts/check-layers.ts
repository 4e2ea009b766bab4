// The import rules Biome's per-folder lists cannot say (biome.json says which
// folder may import which). Fails, naming the imports, when:
// - folders of app/, workers/ and db/ import each other in a circle (two sibling
//   folders importing each other);
// - two files of the user's object (workers/objects/) import each other in a
//   circle, type-only imports included: each part of the object is read on its
//   own, so none may reach back into another that reaches it;
// - code run by Node (emulators/, scripts/, bench/) imports the Worker's domain
//   (only app/shared, workers/adapters and workers/lib, which have none), or the
//   Worker (app/, workers/, db/) imports code run by Node: emulators never ship;
// - a test imports the bench: the bench may use test support, never the reverse (only the bench's own unit tests,
//   test/*/bench-*.test.ts, import bench code).
// Run by `npm run lint`; see docs/architecture.md.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

export const root = join(dirname(new URL(import.meta.url).pathname), "..");
export const ROOTS = ["app", "workers", "db"];
/** Code run by Node, never bundled into the Worker. */
export const NODE_ROOTS = ["emulators", "scripts", "bench"];
/**
 * What Node-run code may import of ours: itself, the e2e harness and fixtures, the Worker's domain-free parts, and
 * the few files of app/ and workers/ that tsconfig.node.json lists as safe to run in Node.
 */
const NODE_MAY_IMPORT = [
  /^emulators\//,
  /^scripts\//,
  /^bench\//,
  /^test\/(e2e|fixtures)\//,
  /^app\/shared\//,
  /^workers\/(adapters|lib)\//,
];
const NODE_SAFE_FILES = new Set(
  (JSON.parse(readFileSync(join(root, "tsconfig.node.json"), "utf8")) as { include: string[] }).include.filter((f) =>
    /^(app|workers)\/.*\.tsx?$/.test(f),
  ),
);
const ALIASES: [string, string][] = [
  ["~/", "app/"],
  ["@workers/", "workers/"],
  ["@db/", "db/"],
  ["@test/", "test/"],
];

/** The folder a file belongs to, for the cycle check: app/routes, workers/services, db, … */
export function unitOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "db") return "db";
  if (parts.length <= 2) return parts[0]!; // app/root.tsx, workers/app.ts: the entry files
  return `${parts[0]}/${parts[1]}`;
}

export function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const path = `${dir}/${name}`;
    if (name.startsWith(".") || name === "node_modules") continue;
    if (statSync(join(root, path)).isDirectory()) walk(path, out);
    else if (/\.(ts|tsx)$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

export function resolve(from: string, spec: string, files: Set<string>): string | null {
  let base: string | null = null;
  if (spec.startsWith(".")) base = normalize(join(dirname(from), spec));
  else for (const [alias, dir] of ALIASES) if (spec.startsWith(alias)) base = dir + spec.slice(alias.length);
  if (base === null) return null;
  base = base.split("?")[0]!;
  for (const c of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) if (files.has(c)) return c;
  return null;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** Every file `file` imports (type-only imports and re-exports included), resolved among `files`. */
export function importsOf(file: string, text: string, files: Set<string>): string[] {
  return [...text.matchAll(IMPORT)].flatMap((m) => resolve(file, m[1]!, files) ?? []);
}

/** Which of `files` (under `prefix`) import which, file by file. */
export function fileGraph(
  files: string[],
  read: (f: string) => string,
  prefix: string,
): Map<string, Map<string, string>> {
  const set = new Set(files);
  const graph = new Map<string, Map<string, string>>();
  for (const file of files) {
    if (!file.startsWith(prefix)) continue;
    for (const target of importsOf(file, read(file), set)) {
      if (!target.startsWith(prefix) || target === file) continue;
      if (!graph.has(file)) graph.set(file, new Map());
      graph.get(file)!.set(target, `${file} -> ${target}`);
    }
  }
  return graph;
}

/** Imports that cross between the Worker and the code Node runs, the wrong way. */
export function nodeBoundary(files: string[], read: (f: string) => string): string[] {
  const set = new Set(files);
  const wrong: string[] = [];
  for (const file of files) {
    const top = file.split("/")[0]!;
    const nodeRun = NODE_ROOTS.includes(top);
    if (!nodeRun && !ROOTS.includes(top)) continue;
    for (const target of importsOf(file, read(file), set)) {
      const targetTop = target.split("/")[0]!;
      const allowed = NODE_MAY_IMPORT.some((r) => r.test(target)) || NODE_SAFE_FILES.has(target);
      if (nodeRun ? !allowed : NODE_ROOTS.includes(targetTop)) {
        wrong.push(`${file} -> ${target}`);
      }
    }
  }
  return wrong;
}

/** The bench's own unit tests: the only tests that may import bench code. */
const BENCH_OWN_TESTS = /^test\/[^/]+\/bench-[^/]+\.test\.ts$/;

/** Imports of bench code from tests other than the bench's own. */
export function testsIntoBench(files: string[], read: (f: string) => string): string[] {
  const set = new Set(files);
  const wrong: string[] = [];
  for (const file of files) {
    if (!file.startsWith("test/") || BENCH_OWN_TESTS.test(file)) continue;
    for (const target of importsOf(file, read(file), set)) {
      if (target.startsWith("bench/")) wrong.push(`${file} -> ${target}`);
    }
  }
  return wrong;
}

/**
 * Tests outside test/support that stub the provider at the isolate's fetch themselves: a spy on `fetch` in a file
 * that names the provider's test address. The one stub is test/support/provider-stub.ts (issue 48 item 2).
 */
export function ownProviderStubs(tests: string[], read: (f: string) => string): string[] {
  const SPY = /spyOn\(\s*globalThis\s*,\s*["']fetch["']\s*\)|globalThis\.fetch\s*=[^=]/;
  return tests.filter((f) => !f.startsWith("test/support/") && /provider\.test/.test(read(f)) && SPY.test(read(f)));
}

/** The browser's one client of our API (issue 48 item 1): no other file of app/components or app/lib calls fetch. */
const API_CLIENT = "app/lib/api.ts";

/**
 * Browser code that may call fetch itself, and why: the landing page's script is serialised into the page with
 * Function.prototype.toString, so it can import nothing (ADR 0136).
 */
const OWN_FETCH_ALLOWED: Record<string, string> = { "app/lib/islands.ts": "serialised inline script, no imports" };

/** Browser code that calls fetch itself instead of going through app/lib/api.ts. */
export function ownFetches(files: string[], read: (f: string) => string): string[] {
  const browser = (f: string) => /^app\/(components|lib)\//.test(f) && f !== API_CLIENT && !OWN_FETCH_ALLOWED[f];
  return files.filter((f) => browser(f) && /\bfetch\s*\(/.test(read(f)));
}

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

/** What the check finds wrong, as lines to print; empty when all is well. */
export function layerProblems(files: string[], read: (f: string) => string, tests: string[] = []): string[] {
  const problems: string[] = [];
  const folders = folderCycles(folderGraph(files, read));
  if (folders.length > 0)
    problems.push("Folders import each other in a circle:", ...folders.map((c) => `  ${c.join(", then ")}`));
  const objectFiles = folderCycles(fileGraph(files, read, "workers/objects/"));
  if (objectFiles.length > 0) {
    problems.push("Files of the user's object import each other in a circle (type-only imports count):");
    problems.push(...objectFiles.map((c) => `  ${c.join(", then ")}`));
  }
  const crossing = nodeBoundary(files, read);
  if (crossing.length > 0) {
    problems.push("Imports across the Worker and the code Node runs:", ...crossing.map((c) => `  ${c}`));
  }
  const fetching = ownFetches(files, read);
  if (fetching.length > 0) {
    problems.push(`Browser code calls fetch itself (go through ${API_CLIENT}):`, ...fetching.map((f) => `  ${f}`));
  }
  const stubs = ownProviderStubs(tests, read);
  if (stubs.length > 0) {
    problems.push("Tests stub the provider's fetch themselves (use test/support/provider-stub.ts):");
    problems.push(...stubs.map((f) => `  ${f}`));
  }
  const intoBench = testsIntoBench([...files, ...tests], read);
  if (intoBench.length > 0) {
    problems.push("Tests import the bench (move what both use to test/):", ...intoBench.map((c) => `  ${c}`));
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = [...ROOTS, ...NODE_ROOTS].flatMap((r) => walk(r));
  const read = (f: string) => readFileSync(join(root, f), "utf8");
  const problems = layerProblems(files, read, walk("test"));
  if (problems.length > 0) {
    console.error(`${problems.join("\n")}\n(docs/architecture.md)`);
    process.exit(1);
  }
  const graph = folderGraph(files, read);
  const edges = [...graph.values()].reduce((n, m) => n + m.size, 0);
  const objectFiles = files.filter((f) => f.startsWith("workers/objects/")).length;
  console.log(
    `layers: ${graph.size} folders, ${edges} folder-to-folder imports, no cycles; ${objectFiles} files of the object, no cycles; Node-run code and the Worker apart; tests import no bench code`,
  );
}
