import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { layerProblems, NODE_ROOTS, ROOTS, root, walk } from "../../scripts/check-layers.ts";

// The layer check of `npm run lint` (scripts/check-layers.ts) on this tree, and on this tree with one planted
// import: each plant must be caught, named by its files.

const files = [...ROOTS, ...NODE_ROOTS].flatMap((r) => walk(r));
const real = (f: string) => readFileSync(join(root, f), "utf8");

function planted(file: string, line: string) {
  const all = files.includes(file) ? files : [...files, file];
  return layerProblems(all, (f) => (f === file ? `${line}\n${files.includes(file) ? real(f) : ""}` : real(f)));
}

describe("the layer check", () => {
  it("finds nothing wrong in this tree", () => {
    expect(layerProblems(files, real, walk("test"))).toEqual([]);
  });

  it("fails on a test importing the bench, and lets the bench's own unit tests do it", () => {
    // Built from parts, so this file's own text imports nothing of the bench.
    const line = ["import { median } from", '"../../bench/module.ts";'].join(" ");
    const into = (file: string) => layerProblems(files, (f) => (f === file ? line : real(f)), [file]);
    expect(into("test/e2e/planted.e2e.ts").join("\n")).toContain("test/e2e/planted.e2e.ts -> bench/module.ts");
    expect(into("test/unit/bench-planted.test.ts")).toEqual([]);
  });

  it("fails on browser code calling fetch itself, and lets the API client do it", () => {
    const call = ["const res = await fe", 'tch("/api/me");'].join("");
    expect(planted("app/lib/planted.ts", call).join("\n")).toMatch(
      /Browser code calls fetch itself[\s\S]*app\/lib\/planted.ts/,
    );
    expect(planted("app/components/planted.tsx", call).join("\n")).toContain("app/components/planted.tsx");
    expect(planted("app/lib/api.ts", call)).toEqual([]);
  });

  it("fails on a test stubbing the provider's fetch itself, and lets test/support's one stub do it", () => {
    // Built from parts, so this file's own text is no such stub.
    const text = [`vi.${"spyOn"}(globalThis, "fetch")`, `if (url.startsWith("http://provider${".test"}/"))`].join("\n");
    const stubs = (file: string) => layerProblems(files, (f) => (f === file ? text : real(f)), [file]);
    expect(stubs("test/integration/planted.test.ts").join("\n")).toContain("test/integration/planted.test.ts");
    expect(stubs("test/integration/planted.test.ts")[0]).toMatch(/stub the provider's fetch themselves/);
    expect(stubs("test/support/planted-stub.ts")).toEqual([]);
  });

  it("fails on two files of the user's object importing each other, even when one import is type-only", () => {
    // runner.ts imports job-rows.ts; job-rows.ts reaching back for a type closes the circle.
    const problems = planted("workers/objects/user/jobs/job-rows.ts", 'import type { JobRunner } from "./runner";');
    expect(problems[0]).toMatch(/Files of the user's object import each other in a circle/);
    expect(problems.join("\n")).toContain(
      "workers/objects/user/jobs/job-rows.ts -> workers/objects/user/jobs/runner.ts",
    );
  });

  it("fails on the Worker importing an emulator, and on an emulator importing the Worker's domain", () => {
    const intoWorker = planted(
      "workers/lib/planted.ts",
      'import { startProviderEmulator } from "../../emulators/provider.ts";',
    );
    expect(intoWorker.join("\n")).toContain("workers/lib/planted.ts -> emulators/provider.ts");
    const intoDomain = planted(
      "emulators/planted.ts",
      'import { requestJob } from "../workers/services/jobs/start.ts";',
    );
    expect(intoDomain.join("\n")).toContain("emulators/planted.ts -> workers/services/jobs/start.ts");
  });
});
