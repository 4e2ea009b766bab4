import { describe, expect, it } from "vitest";
import { closure, runtimeImports, summary } from "../../scripts/job-files.ts";

// The job-files count (issue 48) is only as true as its reading of imports: a type-only import is erased by the
// build and is not a file the job touches; a dynamic import is.

const FILES = new Set(["workers/a.ts", "workers/b.ts", "workers/c.ts", "workers/d.ts", "app/shared/e.ts"]);
const TEXT: Record<string, string> = {
  "workers/a.ts": [
    'import { b } from "./b";',
    'import type { C } from "./c";',
    'export type { D } from "./d";',
    'import { e } from "~/shared/e";',
  ].join("\n"),
  "workers/b.ts": 'export { x } from "./d";\nconst lazy = () => import("./c");',
  "workers/c.ts": "",
  "workers/d.ts": "",
  "app/shared/e.ts": "",
};

describe("job-files", () => {
  it("reads run-time imports, re-exports and dynamic imports, not type-only ones", () => {
    expect(runtimeImports("workers/a.ts", TEXT["workers/a.ts"]!, FILES)).toEqual(["workers/b.ts", "app/shared/e.ts"]);
    expect(runtimeImports("workers/b.ts", TEXT["workers/b.ts"]!, FILES)).toEqual(["workers/d.ts", "workers/c.ts"]);
  });

  it("follows them to a closure, each file once", () => {
    expect(closure(["workers/a.ts"], (f) => TEXT[f]!, FILES)).toEqual([
      "app/shared/e.ts",
      "workers/a.ts",
      "workers/b.ts",
      "workers/c.ts",
      "workers/d.ts",
    ]);
    expect(closure(["workers/c.ts"], (f) => TEXT[f]!, FILES)).toEqual(["workers/c.ts"]);
  });

  it("says what a file holds from its first comment's first sentence", () => {
    expect(summary('import x from "y";\n\n// The queue. It orders jobs.\n// More.\nconst a = 1;')).toBe("The queue.");
    expect(summary("/**\n * A thing: what it is. More.\n */\nexport {}")).toBe("A thing: what it is.");
    expect(summary("export const a = 1;")).toBe("");
  });
});
