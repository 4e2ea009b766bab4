// The one way an R2 object becomes an HTTP answer: its bytes with their type,
// length and ETag, the caller's caching headers, and a 404 when it is gone.
// Given the request, the read is conditional (If-None-Match and friends) and
// an unchanged object answers 304 with no body.

import { NOT_FOUND } from "~/shared/result";
import { failureJson } from "./result";

// An entity-tag list as RFC 9110 writes it ("*", or quoted tags, weak or strong, separated by commas).
const ETAG_LIST = /^\s*(\*|(W\/)?"[^"]*"(\s*,\s*(W\/)?"[^"]*")*)\s*$/;

/**
 * The conditions a cache revalidates with, when they are well formed: R2 throws on an entity-tag list it cannot
 * parse, and a malformed condition is ignored, as RFC 9110 lets a server do. If-Match and If-Unmodified-Since are
 * for writes; a read never asks them.
 */
function revalidation(headers: Headers): Headers | null {
  const out = new Headers();
  const tags = headers.get("If-None-Match");
  if (tags !== null && ETAG_LIST.test(tags)) out.set("If-None-Match", tags);
  const since = headers.get("If-Modified-Since");
  if (tags === null && since !== null && !Number.isNaN(Date.parse(since))) out.set("If-Modified-Since", since);
  return [...out.keys()].length > 0 ? out : null;
}

export async function serveObject(
  bucket: R2Bucket,
  key: string,
  headers: Record<string, string>,
  conditionalOn?: Request,
  /** Serves the object only when this holds of it (read in the same get): a 404 otherwise. */
  only?: (obj: R2Object) => boolean,
): Promise<Response> {
  const onlyIf = conditionalOn ? revalidation(conditionalOn.headers) : null;
  const obj: R2Object | R2ObjectBody | null = onlyIf ? await bucket.get(key, { onlyIf }) : await bucket.get(key);
  if (!obj) return failureJson(NOT_FOUND);
  if (only && !only(obj)) {
    if ("body" in obj) await (obj as R2ObjectBody).body.cancel();
    return failureJson(NOT_FOUND);
  }
  const h = new Headers(headers);
  h.set("ETag", obj.httpEtag);
  // A conditional read whose condition held returns the object without its body.
  if (!("body" in obj)) return new Response(null, { status: 304, headers: h });
  const found = obj as R2ObjectBody;
  h.set("Content-Type", found.httpMetadata?.contentType ?? "application/octet-stream");
  h.set("Content-Length", String(found.size));
  return new Response(found.body, { headers: h });
}
