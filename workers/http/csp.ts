// The Content-Security-Policy of our documents. Imports nothing, so the build (scripts/prerendered-pages.ts)
// computes the policy of a prerendered page with the same code as the Worker.

/**
 * The policy for a document: its inline scripts allowed by a per-request nonce, or (for a cached public page,
 * docs/decisions/0132) by the SHA-256 hashes of exactly the inline scripts it carries.
 */
export function contentSecurityPolicy(nonce: string | null, dev: boolean, hashes: string[] = []): string {
  const sources = [
    "'self'",
    ...(nonce === null ? [] : [`'nonce-${nonce}'`]),
    ...hashes,
    ...(dev ? ["'unsafe-eval'"] : []),
  ];
  const script = sources.join(" ");
  return [
    "default-src 'self'",
    `script-src ${script}`,
    // Inline style attributes drive sliders and progress bars.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "media-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
