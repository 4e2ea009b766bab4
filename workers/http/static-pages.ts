import { contentSecurityPolicy } from "./csp.ts";

// What the build and the Worker share about public pages served as documents
// that are the same for every visitor (docs/decisions/0132 and 0145). This
// module imports nothing but the policy builder, so the build (Node, through
// react-router.config.ts) runs the same code as the Worker.

/**
 * Public pages that ship no JavaScript (route handle `{ hydrate: false }`) and so are written into static files at
 * build time and served by the platform before the Worker runs. A page that hydrates is not listed: its client
 * navigation would read a build-time copy of the root data (signed out) — those are served from the edge cache.
 */
export const PRERENDERED_PAGES = ["/", "/landing"] as const;

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  let bin = "";
  for (const b of new Uint8Array(digest)) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The SHA-256 sources of every inline script in `html`, as CSP wants them ('sha256-…'). */
export async function inlineScriptHashes(html: string): Promise<string[]> {
  const hashes = new Set<string>();
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(m[1] ?? "")) continue;
    hashes.add(`'sha256-${await sha256Base64(m[2] ?? "")}'`);
  }
  return [...hashes];
}

/** The document a cached page is served as: no nonces, no modulepreload links. */
export function staticDocument(html: string): string {
  return html.replace(/<link\b[^>]*\brel="modulepreload"[^>]*\/?>/gi, "").replace(/\snonce="[^"]*"/gi, "");
}

/** The policy of a document that is the same for everyone: its inline scripts allowed by hash, no nonce. */
export async function staticDocumentPolicy(html: string, dev: boolean): Promise<string> {
  return contentSecurityPolicy(null, dev, await inlineScriptHashes(html));
}
