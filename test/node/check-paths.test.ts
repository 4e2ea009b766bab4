import { describe, expect, it } from "vitest";
import { figureProblems, pathProblems } from "../../scripts/check-paths.ts";

// The paths check of `npm run lint` (scripts/check-paths.ts, issue 48): a comment, an ADR or a doc naming a repository
// path that does not exist is caught by file and line; a path that exists, an ADR by its number, a module without its
// extension, a URL and a deliberate "(gone" are not.

const TREE = [
  "docs/decisions/0160-structure-check.md",
  "workers/http/body.ts",
  "workers/lib/structure/check.ts",
  "docs/planted.md",
  "workers/planted.ts",
];

function problems(file: "docs/planted.md" | "workers/planted.ts", text: string): string[] {
  return pathProblems(TREE, (f) => (f === file ? text : ""));
}

describe("the paths check", () => {
  it("catches a doc and a comment naming a path that does not exist, by file and line", () => {
    expect(problems("docs/planted.md", "Intro.\nSee `workers/lib/structure/gone.ts` for the score.")).toEqual([
      "docs/planted.md:2: workers/lib/structure/gone.ts",
    ]);
    // Built from parts, so this file's own line is not a comment naming a missing path.
    const comment = ["//", "read by", "workers/old/queue.ts, once"].join(" ");
    expect(problems("workers/planted.ts", `const a = 1;\n${comment}`)).toEqual([
      "workers/planted.ts:2: workers/old/queue.ts",
    ]);
    expect(problems("workers/planted.ts", "/**\n * Decided in docs/decisions/0999.\n */")).toEqual([
      "workers/planted.ts:2: docs/decisions/0999",
    ]);
  });

  it("passes a path that exists, a folder, an ADR by its number and a module without its extension", () => {
    const text =
      "`workers/lib/structure/check.ts` and workers/lib/structure/, docs/decisions/0160, workers/http/body and docs/.";
    expect(problems("docs/planted.md", text)).toEqual([]);
  });

  it("passes a deliberate name of something gone, a URL, and code that is not a comment", () => {
    expect(problems("docs/planted.md", "`workers/old.ts` (gone: now workers/http/body.ts)")).toEqual([]);
    expect(problems("docs/planted.md", "bench/results/profiles/ (written by the bench)")).toEqual([]);
    expect(problems("docs/planted.md", "Served at /docs/api and https://example.com/app/x.ts")).toEqual([]);
    expect(problems("workers/planted.ts", 'const p = "workers/missing.ts";')).toEqual([]);
  });

  it("fails on a timing written into a comment of app/ or workers/, and leaves code, tests and docs alone", () => {
    const timed = (file: string, text: string) => figureProblems([file], () => text);
    expect(timed("workers/lib/planted.ts", "// a decode takes about 60 ms here")).toEqual([
      "workers/lib/planted.ts:1: // a decode takes about 60 ms here",
    ]);
    expect(timed("app/lib/planted.ts", "const x = 1; // 2.5ms at worst")).toHaveLength(1);
    expect(timed("workers/lib/planted.ts", "const TIMEOUT_MS = 30; // why: the provider's own limit")).toEqual([]);
    expect(timed("workers/lib/planted.ts", 'const label = "waited 30 ms";')).toEqual([]);
    expect(timed("test/unit/planted.test.ts", "// took 30 ms")).toEqual([]);
    expect(timed("docs/decisions/0001-a.md", "It took 30 ms.")).toEqual([]);
  });
});
