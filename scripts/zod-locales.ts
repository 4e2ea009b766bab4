import type { Plugin } from "vite";

// ADR 0361. zod exports every one of its message locales (`z.locales`, `z.core.locales`), and @hono/zod-openapi
// hands the whole `z` namespace to extendZodWithOpenApi as a value, so the bundler keeps every locale in the Worker.
// We never switch zod's language (its messages are English and ours are our own), and zod's default configuration
// imports English directly (zod/v4/classic/schemas.js). The build gives `z.locales` English alone.

/** The import in zod/v4/classic/external.js and zod/v4/core/index.js that brings every locale. */
const LOCALES = "../locales/index.js";
const STAND_IN = "\0zod-locales-english";

export function zodLocalesEnglishOnly(): Plugin {
  return {
    name: "zod-locales-english-only",
    enforce: "pre",
    resolveId(source, importer) {
      if (
        source === LOCALES &&
        /\/node_modules\/zod\/v4\/(classic|core)\//.test(importer?.replaceAll("\\", "/") ?? "")
      ) {
        return STAND_IN;
      }
      return null;
    },
    load(id) {
      return id === STAND_IN ? 'export { default as en } from "zod/v4/locales/en.js";\n' : null;
    },
  };
}
