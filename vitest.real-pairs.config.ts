import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { areaGray, pairSetDir } from "./scripts/structure-pairs.ts";

// The structure check judged on real before/after pairs (issue 43, test/real-pairs), in workerd through the Images
// binding's local stand-in, as the check Worker judges. The pictures are fetched material kept out of git
// (docs/decisions/0220-real-pairs-outside-git.md): a Node service binding (PAIRS) reads them from the set's folder
// and also offers each picture reduced by an exact area average, the second resampler the verdicts are compared on.
const ROOT = resolve(import.meta.dirname);

export default defineConfig(() => {
  const dir = pairSetDir();
  return {
    plugins: [
      cloudflareTest({
        miniflare: {
          compatibilityDate: "2026-10-01",
          compatibilityFlags: ["nodejs_compat"],
          images: { binding: "IMAGES" },
          bindings: { APP_ENV: "test" },
          serviceBindings: {
            async PAIRS(request: Request) {
              const url = new URL(request.url);
              if (url.pathname === "/manifest") {
                return Response.json(readFileSync(join(ROOT, "test/fixtures/structure-real/pairs.jsonl"), "utf8"));
              }
              if (url.pathname === "/report" && request.method === "POST") {
                writeFileSync(join(ROOT, "bench/results/report-structure-real.json"), await request.text());
                return new Response("written");
              }
              const m = /^\/(images|area)\/([\w.-]+)$/.exec(url.pathname);
              const file = m ? join(dir, "images", m[2]!) : "";
              if (!m || !existsSync(file)) return new Response("no such picture", { status: 404 });
              const bytes = new Uint8Array(readFileSync(file));
              if (m[1] === "images") return new Response(bytes);
              const gray = areaGray(bytes, 640);
              return new Response(gray.data, {
                headers: { "x-width": String(gray.width), "x-height": String(gray.height) },
              });
            },
          },
        },
      }),
    ],
    resolve: { tsconfigPaths: true },
    test: {
      include: ["test/real-pairs/**/*.test.ts"],
      testTimeout: 900_000,
      hookTimeout: 900_000,
    },
  };
});
