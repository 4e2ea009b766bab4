import type { Plugin } from "vite";

// ADR 0333. React's server renderer writes a page as thousands of short pieces: a tag's start, an attribute's name,
// its value, a quote. Its Node build (ADR 0147) encodes each string piece into its buffer with its own
// `TextEncoder.encodeInto` call, keeps the fixed pieces as bytes, and measures every piece again with
// `Buffer.byteLength`; in workerd each of those is a call into the runtime. This edit of the build keeps the fixed
// pieces as strings, gathers the string pieces and encodes them once a kilobyte, and counts a short ASCII piece's
// bytes without leaving JavaScript. The bytes written are the same (test/scripts/react-dom-strings.test.ts).

/** The module the build edits: react-dom's Node server build, the one app/entry.server.tsx imports. */
const FILE = "react-dom-server.node.production";

/** Each [from, to]: a piece of that module, replaced; a piece not found exactly once fails the build. */
const EDITS: [from: string, to: string][] = [
  // Every piece goes through the gathering writeChunk below; the published one writes what it gathered.
  ["function writeChunk(destination, chunk) {", "function writeGathered(destination, chunk) {"],
  // The end of each flush writes what is gathered before the last buffer goes out.
  ["function completeWriting(destination) {", "function completeWriting(destination) {\n  flushGathered(destination);"],
  // The fixed pieces (`<li`, ` class="`) stay strings, to be gathered with the rest.
  [
    "function stringToPrecomputedChunk(content) {\n  return textEncoder.encode(content);\n}",
    "function stringToPrecomputedChunk(content) {\n  return content;\n}",
  ],
  ['Buffer.byteLength(chunk, "utf8")', "utf8Length(chunk)"],
  // Each flush starts from nothing gathered, as React's buffer starts empty: should a piece ever be left over, it is
  // dropped, never written into the next flush, which may be another request's page.
  [
    "function flushCompletedQueues(request, destination) {\n  currentView = new Uint8Array(4096);",
    'function flushCompletedQueues(request, destination) {\n  gathered = "";\n  currentView = new Uint8Array(4096);',
  ],
];

/**
 * The bytes of `text` in UTF-8, as `Buffer.byteLength(text, "utf8")` counts them. A short ASCII string (most of what
 * React writes) is counted here; the rest by Buffer, whose call costs more than this loop over a few dozen units.
 */
export function utf8Length(text: string): number {
  if (text.length > 64) return Buffer.byteLength(text, "utf8");
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return Buffer.byteLength(text, "utf8");
  return text.length;
}

/** A line only the edited module holds: how `npm run check:bundle` tells that a server build has the edit. */
export const EDITED_MARK = "function flushGathered(destination) {";

/**
 * Added to the module. React writes only inside a flush, which runs to its end without awaiting and ends with
 * completeWriting, as its own buffer's state already assumes; so what is gathered never outlives one flush.
 */
const ADDED = `
var gathered = "";
${EDITED_MARK}
  if (0 !== gathered.length) {
    var text = gathered;
    gathered = "";
    writeGathered(destination, text);
  }
}
function writeChunk(destination, chunk) {
  if ("string" === typeof chunk) {
    gathered += chunk;
    1024 < gathered.length && flushGathered(destination);
  } else flushGathered(destination), writeGathered(destination, chunk);
}
${utf8Length.toString()}
`;

/** react-dom's Node server build with the edits above, or an error naming the piece that was not found once. */
export function patchReactDomServer(code: string): string {
  let out = code;
  for (const name of ["gathered", "flushGathered", "writeGathered", "utf8Length"]) {
    if (new RegExp(`\\b${name}\\b`).test(code)) throw new Error(`react-dom-strings: react-dom already names ${name}`);
  }
  for (const [from, to] of EDITS) {
    const at = out.indexOf(from);
    if (at < 0 || out.indexOf(from, at + 1) >= 0) throw new Error(`react-dom-strings: not found once: ${from}`);
    out = out.replace(from, () => to);
  }
  return out + ADDED;
}

/** The Vite plugin: edits that one module wherever it is bundled (the server build only; browsers never load it). */
export function reactDomStrings(): Plugin {
  return {
    name: "react-dom-strings",
    transform(code, id) {
      if (!id.includes(FILE)) return;
      return { code: patchReactDomServer(code), map: null };
    },
  };
}
