import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { compileFunction } from "node:vm";
import { describe, expect, it } from "vitest";
import { patchReactDomServer, utf8Length } from "../../scripts/react-dom-strings.ts";

// ADR 0333: the build edits react-dom's Node build so it gathers the strings it writes and encodes them in one call
// per kilobyte. The edit may change how the bytes are cut into chunks, never the bytes: each page below is rendered
// by the module as published and as edited, and the two outputs must be the same bytes.

const require = createRequire(import.meta.url);
/** A package's file under cjs/ (the packages' exports maps hide those paths from require). */
const production = (pkg: string, file: string) => join(dirname(require.resolve(`${pkg}/package.json`)), "cjs", file);
/** The file `react-dom/server.node` loads in production. */
const FILE = production("react-dom", "react-dom-server.node.production.js");

/** React's production build, which the server build is made to run with (vitest's own `react` is its development one). */
const PRODUCTION: Record<string, string> = {
  react: production("react", "react.production.js"),
  "react-dom": production("react-dom", "react-dom.production.js"),
};
const React = require(PRODUCTION.react as string) as typeof import("react");
const { createElement: h, Suspense, use } = React;

type Render = (node: unknown, options?: object) => Promise<ReadableStream<Uint8Array> & { allReady: Promise<void> }>;

/** Loads a copy of react-dom's Node server build from its source text, as its own module. */
function load(code: string): Render {
  const module = { exports: {} as { renderToReadableStream: Render } };
  const run = compileFunction(code, ["exports", "require", "module", "__filename", "__dirname"], { filename: FILE });
  const requireFrom = createRequire(FILE);
  const requireProduction = (id: string) => requireFrom(PRODUCTION[id] ?? id);
  run(module.exports, requireProduction, module, FILE, dirname(FILE));
  return module.exports.renderToReadableStream;
}

const published = load(readFileSync(FILE, "utf8"));
const edited = load(patchReactDomServer(readFileSync(FILE, "utf8")));

async function bytes(render: Render, node: unknown): Promise<{ text: string }> {
  // Read as it comes (a browser's way), so boundaries that resolve later are written in later flushes.
  const stream = await render(node);
  const parts: Uint8Array[] = [];
  const reader = stream.getReader();
  for (let part = await reader.read(); !part.done; part = await reader.read()) parts.push(part.value);
  return { text: Buffer.concat(parts).toString("utf8") };
}

function later<T>(value: T, ms: number): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

function Late({ value }: { value: Promise<string> }) {
  return h("p", { title: "late" }, use(value));
}

/** A card as the library draws one, with the kinds of text a name can hold. */
const card = (i: number, name: string) =>
  h(
    "li",
    { key: i, className: "group relative overflow-hidden rounded-xl", "data-photo-id": `p${i}` },
    h("a", { href: `/photos/p${i}`, "aria-label": `Open ${name}` }, h("img", { src: `/t/${i}`, alt: name })),
    h("p", { title: name }, name, " ", i),
  );

const NAMES = ["Living room", "Café été", "Küche 🏠", "家の居間", "lone \uD800 surrogate", "x".repeat(3000), "<b>&\"'"];

describe("react-dom's Node build as the build edits it", () => {
  it("finds every piece it edits exactly once in the installed react-dom", () => {
    expect(() => patchReactDomServer(readFileSync(FILE, "utf8"))).not.toThrow();
  });

  it("refuses a react-dom whose pieces moved, so an upgrade cannot half-apply it", () => {
    const code = readFileSync(FILE, "utf8").replace("function completeWriting(destination) {", "function x() {");
    expect(() => patchReactDomServer(code)).toThrow(/completeWriting/);
  });

  it("writes the same bytes for a page of a few hundred cards, non-ASCII and long text included", async () => {
    const page = h("ul", null, ...Array.from({ length: 300 }, (_, i) => card(i, NAMES[i % NAMES.length] as string)));
    const [a, b] = await Promise.all([bytes(published, page), bytes(edited, page)]);
    expect(a.text.length).toBeGreaterThan(100_000);
    expect(b.text).toBe(a.text);
  });

  it("writes the same bytes when boundaries stream in later, around a large fallback and large content", async () => {
    const page = () =>
      h(
        "main",
        null,
        h("h1", null, "Listing ", "été"),
        ...[5, 15, 25].map((ms, i) =>
          h(
            Suspense,
            { key: ms, fallback: h("p", null, "Loading ", "…".repeat(i * 400)) },
            h(Late, { value: later(`${NAMES[i]} `.repeat(200 * i + 1), ms) }),
          ),
        ),
      );
    const [a, b] = await Promise.all([bytes(published, page()), bytes(edited, page())]);
    expect(a.text).toContain('<template id="B:0">');
    expect(a.text).toContain(`<p title="late">${"Küche 🏠 ".repeat(401)}`.trimEnd());
    expect(b.text).toBe(a.text);
  });
  it("keeps two pages streamed at once apart: each gets its own bytes, as when rendered alone", async () => {
    // One module serves every request of an isolate; what it gathers must never cross into another page.
    const streamed = (label: string, delays: number[]) =>
      h(
        "section",
        { "aria-label": label },
        ...delays.map((ms) =>
          h(
            Suspense,
            { key: ms, fallback: h("i", null, `${label} waits`) },
            h(Late, { value: later(`${label} ${ms} `.repeat(90), ms) }),
          ),
        ),
      );
    const [one, two] = await Promise.all([
      bytes(edited, streamed("Küche", [3, 12, 21])),
      bytes(edited, streamed("Loft", [7, 16, 25])),
    ]);
    expect(one.text).toBe((await bytes(published, streamed("Küche", [3, 12, 21]))).text);
    expect(two.text).toBe((await bytes(published, streamed("Loft", [7, 16, 25]))).text);
    expect(one.text).not.toContain("Loft");
  });
});

describe("utf8Length", () => {
  it("counts as Buffer.byteLength does, for short and long, ASCII and not", () => {
    for (const text of ["", "a", "abc", ...NAMES, "é".repeat(70), "\uDC00", "a\uD83C", "🏠".repeat(40)])
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, "utf8"));
  });
});
