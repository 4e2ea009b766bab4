import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zodLocalesEnglishOnly } from "../../scripts/zod-locales.ts";

// ADR 0361: the Worker's build gives zod's `locales` English alone. The cut must still find zod's imports after an
// upgrade (else every locale is back in the Worker), must touch no other package's, and must leave English whole.

const zodDir = dirname(createRequire(import.meta.url).resolve("zod/package.json"));
const plugin = zodLocalesEnglishOnly();
const resolveId = plugin.resolveId as (source: string, importer?: string) => string | null;
const load = plugin.load as (id: string) => string | null;

describe("zod's locales in the Worker's build", () => {
  it("stands in for the import of every locale in zod's classic entry and its core, and nowhere else", () => {
    for (const file of ["v4/classic/external.js", "v4/core/index.js"]) {
      const importer = join(zodDir, file);
      expect(readFileSync(importer, "utf8")).toContain('export * as locales from "../locales/index.js";');
      const id = resolveId("../locales/index.js", importer);
      expect(id).toMatch(/^\0/);
      expect(load(id!)).toBe('export { default as en } from "zod/v4/locales/en.js";\n');
    }
    expect(resolveId("../locales/index.js", "/work/node_modules/other/lib/index.js")).toBeNull();
    expect(resolveId("../locales/en.js", join(zodDir, "v4/classic/schemas.js"))).toBeNull();
  });

  it("keeps the English locale zod configures itself with, which the stand-in exports", async () => {
    const { default: en } = await import("zod/v4/locales/en.js");
    expect(z.locales.en).toBe(en);
    const failed = z.object({ name: z.string() }).safeParse({ name: 1 });
    expect(failed.error?.issues[0]?.message).toBe("Invalid input: expected string, received number");
  });
});
