/** A response body read whole, or why not: larger than the cap, or broken off on the way. */
export type CappedBody = { ok: true; bytes: Uint8Array } | { ok: false; why: "too-large" | "broken" };

/**
 * Reads `res`'s body if it is at most `cap` bytes. A declared length frames the body (HTTP/1.1 and 2), so within the
 * cap it is read in one native call instead of chunk by chunk in JavaScript (on a user's object, whose thread the
 * chunks held); without one, chunks are counted as they come and the read stops at the cap.
 */
export async function readCapped(res: Response, cap: number): Promise<CappedBody> {
  const declared = res.headers.get("Content-Length");
  if (Number(declared ?? "0") > cap) {
    await res.body?.cancel();
    return { ok: false, why: "too-large" };
  }
  try {
    if (declared !== null && /^\d+$/.test(declared)) {
      const bytes = new Uint8Array(await res.arrayBuffer());
      return bytes.byteLength > cap ? { ok: false, why: "too-large" } : { ok: true, bytes };
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = res.body?.getReader();
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      total += next.value.byteLength;
      if (total > cap) {
        await reader?.cancel();
        return { ok: false, why: "too-large" };
      }
      chunks.push(next.value);
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return { ok: true, bytes };
  } catch {
    return { ok: false, why: "broken" };
  }
}
