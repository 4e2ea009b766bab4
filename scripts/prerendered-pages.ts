import { existsSync } from "node:fs";
import { appendFile, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { INLINE_CSS_ID } from "../app/lib/inline-css-id.ts";
import { PRERENDERED_PAGES, staticDocumentPolicy } from "../workers/http/static-pages.ts";
import { pageStylesheet } from "./page-stylesheet.ts";

// The last step of `react-router build` (react-router.config.ts, buildEnd), after React Router has prerendered
// PRERENDERED_PAGES through the built Worker (docs/decisions/0145-public-pages-prerendered.md):
//   - each page's inlined stylesheet is cut to the rules that can match it (ADR 0150): the page ships no JavaScript,
//     so its markup is final;
//   - each page's headers go into the static assets' _headers file: the same security headers the Worker sets,
//     and a Content-Security-Policy that allows exactly the page's inline scripts by their SHA-256;
//   - the data files React Router writes beside them (/_.data, /landing.data) are removed: a hydrated page that
//     navigates to one of these pages must read the visitor's own root data from the Worker, never a build-time
//     copy in which nobody is signed in.

/** Headers every document gets from the Worker (workers/http/security.ts), less the policy, which is per page. */
const DOCUMENT_HEADERS = [
  "Permissions-Policy: camera=(), microphone=(), geolocation=(), payment=()",
  "Cross-Origin-Opener-Policy: same-origin",
  // Browsers ask again each time (with the ETag the platform adds): a deploy is seen at once.
  "Cache-Control: no-cache",
];

/** Where React Router writes a prerendered page ("/landing" → landing/index.html). */
function writtenFileOf(page: string): string {
  return page === "/" ? "index.html" : `${page.slice(1)}/index.html`;
}

/**
 * Where the page is served from: "/landing" as landing.html, which the platform serves at /landing itself (a
 * landing/index.html would be served at /landing/ only, after a redirect from the address people use).
 */
function htmlFileOf(page: string): string {
  return page === "/" ? "index.html" : `${page.slice(1)}.html`;
}

function dataFileOf(page: string): string {
  return page === "/" ? "_.data" : `${page.slice(1)}.data`;
}

/** The _headers rule for one prerendered page (its address; "/landing/" only redirects to it). */
function headerRules(page: string, policy: string): string {
  const lines = [
    // The general /* rule's policy (for files that are not pages) is removed first, so only this one applies.
    "  ! Content-Security-Policy",
    `  Content-Security-Policy: ${policy}`,
    ...DOCUMENT_HEADERS.map((h) => `  ${h}`),
  ].join("\n");
  return `${page}\n${lines}\n`;
}

const INLINE_STYLE = new RegExp(`(<style id="${INLINE_CSS_ID}">)([\\s\\S]*?)(</style>)`);

/** `html` with its inlined app stylesheet cut to the rules that can match it. */
export function withPageStylesheet(html: string, page: string): string {
  const found = INLINE_STYLE.exec(html);
  if (!found) throw new Error(`Prerender: ${page} has no inlined stylesheet (<style id="${INLINE_CSS_ID}">)`);
  const { css } = pageStylesheet(found[2] ?? "", html);
  // A function, so that "$&" or "$1" in the stylesheet is not read as a replacement pattern.
  return html.replace(INLINE_STYLE, (_, open: string, _css: string, close: string) => `${open}${css}${close}`);
}

export async function finishPrerenderedPages(clientDir: string): Promise<void> {
  const rules: string[] = [];
  for (const page of PRERENDERED_PAGES) {
    const written = join(clientDir, writtenFileOf(page));
    if (!existsSync(written)) throw new Error(`Prerender: ${page} was not written to ${written}`);
    const html = await readFile(written, "utf8");
    if (/\snonce="/.test(html) || /rel="modulepreload"/.test(html)) {
      throw new Error(`Prerender: ${page} is not the static document (a nonce or a modulepreload link is in it)`);
    }
    const finished = withPageStylesheet(html, page);
    await writeFile(written, finished);
    rules.push(headerRules(page, await staticDocumentPolicy(finished, false)));
    await rm(join(clientDir, dataFileOf(page)), { force: true });
    if (page !== "/") {
      await rename(written, join(clientDir, htmlFileOf(page)));
      await rm(dirname(written), { recursive: true });
    }
  }
  await appendFile(
    join(clientDir, "_headers"),
    `\n# Prerendered public pages (scripts/prerendered-pages.ts)\n${rules.join("\n")}`,
  );
}
