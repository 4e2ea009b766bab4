import { readFileSync } from "node:fs";
import { join } from "node:path";
import { importsOf, root, walk } from "./check-layers.ts";

// No JavaScript JPEG codec on the Worker's request paths (docs/decisions/0250-labels-drawn-by-images.md, issue 46).
// A label burned in with jpeg-js cost about 700 ms of CPU on a 2304 px result; the label is now a small PNG the
// Images binding draws onto the photo. Fails, naming the chain of imports, when a JavaScript JPEG codec is reachable
// from the Worker's entry (workers/app.ts: every page, API route, cron and object) or from the label's own modules.
// Part of `npm run lint`.
//
//   node scripts/check-label-codec.ts

/** Packages that decode or encode JPEG in JavaScript on the calling thread. */
export const JS_JPEG_CODECS = ["jpeg-js", "jpeg-decoder", "jpgjs", "@jsquash/jpeg"];

/** Where the search starts: the Worker's entry, and the label's road named on its own so a rename is noticed. */
export const ENTRIES = [
  "workers/app.ts",
  "workers/services/mls/labels.ts",
  "workers/services/mls/pack.ts",
  "workers/services/mls/downloads.ts",
  "workers/lib/label/render.ts",
  "workers/lib/images.ts",
];

const BARE = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"'./~@][^"']*|@[^"'/]+\/[^"']+)["']/g;

/** The codec packages `text` imports by name. */
export function codecImports(text: string): string[] {
  return [...text.matchAll(BARE)].map((m) => m[1]!).filter((spec) => JS_JPEG_CODECS.includes(spec));
}

/**
 * Every reachable file that imports a JavaScript JPEG codec, each with the chain of imports from an entry to it.
 * Type-only imports count (the check reads text, not types).
 */
export function codecProblems(files: string[], read: (f: string) => string, entries = ENTRIES): string[] {
  const set = new Set(files);
  const problems: string[] = [];
  for (const entry of entries) {
    if (!set.has(entry)) {
      problems.push(`${entry} is not there: update ENTRIES in scripts/check-label-codec.ts`);
      continue;
    }
    const via = new Map<string, string | null>([[entry, null]]);
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.shift()!;
      const text = read(file);
      for (const codec of codecImports(text)) {
        const chain = [file];
        for (let at = via.get(file); at; at = via.get(at)) chain.unshift(at);
        problems.push(`${chain.join(" -> ")} imports ${codec}`);
      }
      for (const next of importsOf(file, text, set)) {
        if (via.has(next)) continue;
        via.set(next, file);
        queue.push(next);
      }
    }
  }
  return [...new Set(problems)];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = [...walk("workers"), ...walk("app"), ...walk("db")];
  const read = (f: string) => readFileSync(join(root, f), "utf8");
  const problems = codecProblems(files, read);
  if (problems.length > 0) {
    console.error(
      "label codec: a JavaScript JPEG codec is reachable from the Worker (docs/decisions/0250-labels-drawn-by-images.md):",
    );
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(
    `label codec: no JavaScript JPEG codec (${JS_JPEG_CODECS.join(", ")}) reachable from ${ENTRIES.length} entries over ${files.length} files`,
  );
}
