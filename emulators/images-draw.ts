import type { Server } from "node:http";
import { crc32, deflateSync } from "node:zlib";
import { json, listen } from "./http.ts";
import { decodeImage, decodePng, encodeJpeg, isJpeg, isPng, type Raster } from "./images.ts";
import { loadSharp } from "./sharp.ts";

// The Images binding's draw() where the binding is miniflare's offline stand-in, which leaves every draw out
// (docs/decisions/0250-labels-drawn-by-images.md). The Worker's images adapter (workers/lib/images.ts, burnOverlay)
// sends the same request here under `npm start`, the e2e stack, the bench and the workerd tests: the photo, a PNG
// overlay, its position in pixels from the edges (at most one of left/right and of top/bottom; an axis with neither
// is centred, as the binding does) and the output format. The overlay goes over the photo ("source over", the
// binding's default composite). The decode and encode run here, in Node, never in the Worker: with sharp (libvips,
// which wrangler installs for miniflare's own stand-in) where it loads, else with the JavaScript codec of
// emulators/images.ts. Never bundled.
//
//   POST /draw            multipart: image, overlay, position (JSON), format (image/jpeg | image/png), quality
//   GET  /_emulator/draws what was drawn (the overlay's size, the position, the format), oldest first

export interface DrawPosition {
  top?: number;
  bottom?: number;
  left?: number;
  right?: number;
}

export interface DrawCall {
  at: string;
  photo: { width: number; height: number };
  overlay: { width: number; height: number };
  position: DrawPosition;
  format: string;
}

/** `overlay` drawn over `photo` (in place) with its alpha, at `position`. */
export function drawOver(photo: Raster, overlay: Raster, position: DrawPosition): void {
  const W = photo.width;
  const H = photo.height;
  const x0 =
    position.left ?? (position.right !== undefined ? W - position.right - overlay.width : (W - overlay.width) >> 1);
  const y0 =
    position.top ?? (position.bottom !== undefined ? H - position.bottom - overlay.height : (H - overlay.height) >> 1);
  const px = photo.data;
  const src = overlay.data;
  for (let y = 0; y < overlay.height; y++) {
    const ty = y0 + y;
    if (ty < 0 || ty >= H) continue;
    for (let x = 0; x < overlay.width; x++) {
      const tx = x0 + x;
      if (tx < 0 || tx >= W) continue;
      const s = (y * overlay.width + x) * 4;
      const a = (src[s + 3] ?? 0) / 255;
      if (a === 0) continue;
      const t = (ty * W + tx) * 4;
      for (let c = 0; c < 3; c++) px[t + c] = Math.round(px[t + c]! + ((src[s + c] ?? 0) - px[t + c]!) * a);
    }
  }
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit RGB PNG of the raster (alpha dropped: a photo). */
export function encodePngRgb(img: Raster): Uint8Array {
  const stride = img.width * 3;
  const raw = Buffer.alloc((stride + 1) * img.height);
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      const s = (y * img.width + x) * 4;
      const o = y * (stride + 1) + 1 + x * 3;
      raw[o] = img.data[s]!;
      raw[o + 1] = img.data[s + 1]!;
      raw[o + 2] = img.data[s + 2]!;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(img.width, 0);
  ihdr.writeUInt32BE(img.height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", new Uint8Array()),
  ]);
}

function checkPosition(p: unknown): DrawPosition | null {
  if (typeof p !== "object" || p === null) return null;
  const pos = p as Record<string, unknown>;
  for (const [k, v] of Object.entries(pos)) {
    if (!["top", "bottom", "left", "right"].includes(k)) return null;
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 0)) return null;
  }
  if (pos.left !== undefined && pos.right !== undefined) return null;
  if (pos.top !== undefined && pos.bottom !== undefined) return null;
  return pos as DrawPosition;
}

/** One draw: the answer's status and body (shared by the HTTP server and the workerd tests' service). */
export async function handleDraw(request: Request, calls: DrawCall[]): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === "GET" && url.pathname === "/_emulator/draws") return Response.json(calls);
  if (request.method !== "POST" || url.pathname !== "/draw")
    return Response.json({ error: "not found" }, { status: 404 });
  const form = await request.formData();
  const image = form.get("image");
  const overlay = form.get("overlay");
  const format = String(form.get("format") ?? "image/jpeg");
  const quality = Number(form.get("quality") ?? 90);
  let position: DrawPosition | null = null;
  try {
    position = checkPosition(JSON.parse(String(form.get("position") ?? "{}")));
  } catch {
    position = null;
  }
  if (!(image instanceof Blob) || !(overlay instanceof Blob) || !position) {
    return Response.json({ error: "expected image, overlay and a position" }, { status: 400 });
  }
  if (format !== "image/jpeg" && format !== "image/png") {
    return Response.json({ error: `unsupported output format ${format}` }, { status: 415 });
  }
  const photoBytes = new Uint8Array(await image.arrayBuffer());
  const overlayBytes = new Uint8Array(await overlay.arrayBuffer());
  if (!(isJpeg(photoBytes) || isPng(photoBytes)) || !isPng(overlayBytes)) {
    return Response.json({ error: "the image is not a JPEG or PNG, or the overlay not a PNG" }, { status: 415 });
  }
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  const drawn = (await drawWithSharp(photoBytes, overlayBytes, position, format, q)) ?? drawHere();
  function drawHere() {
    const photo = decodeImage(photoBytes);
    const over = decodePng(overlayBytes);
    drawOver(photo, over, position as DrawPosition);
    const bytes = format === "image/png" ? encodePngRgb(photo) : encodeJpeg(photo, q);
    return {
      bytes,
      photo: { width: photo.width, height: photo.height },
      overlay: { width: over.width, height: over.height },
    };
  }
  calls.push({ at: new Date().toISOString(), photo: drawn.photo, overlay: drawn.overlay, position, format });
  if (calls.length > 1000) calls.shift();
  return new Response(drawn.bytes as Uint8Array<ArrayBuffer>, { headers: { "Content-Type": format } });
}

/**
 * The draw by sharp (libvips), the library miniflare's own Images stand-in runs and wrangler installs: about 50 ms
 * for a 2304 px JPEG where the JavaScript codec below takes seconds on a loaded machine. Null where sharp cannot be
 * loaded: then the JavaScript path draws.
 */
async function drawWithSharp(
  photoBytes: Uint8Array,
  overlayBytes: Uint8Array,
  position: DrawPosition,
  format: string,
  quality: number,
): Promise<{
  bytes: Uint8Array;
  photo: { width: number; height: number };
  overlay: { width: number; height: number };
} | null> {
  const sharp = await loadSharp();
  if (!sharp) return null;
  const base = sharp(photoBytes);
  const meta = await base.metadata();
  const over = await sharp(overlayBytes).metadata();
  const W = meta.width ?? 0;
  const H = meta.height ?? 0;
  const ow = over.width ?? 0;
  const oh = over.height ?? 0;
  const left = position.left ?? (position.right !== undefined ? W - position.right - ow : (W - ow) >> 1);
  const top = position.top ?? (position.bottom !== undefined ? H - position.bottom - oh : (H - oh) >> 1);
  const composed = base.composite([{ input: Buffer.from(overlayBytes), left, top }]);
  const out = format === "image/png" ? composed.png() : composed.jpeg({ quality });
  return {
    bytes: new Uint8Array(await out.toBuffer()),
    photo: { width: W, height: H },
    overlay: { width: ow, height: oh },
  };
}

export async function startImagesDrawEmulator(opts: { port: number }): Promise<Server> {
  const calls: DrawCall[] = [];
  return listen("images", opts.port, async (req, body, res) => {
    const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      ...(req.method === "POST" ? { body: new Uint8Array(body) } : {}),
    });
    const answer = await handleDraw(request, calls);
    if (answer.headers.get("Content-Type") === "application/json") return json(res, answer.status, await answer.json());
    res.writeHead(answer.status, { "Content-Type": answer.headers.get("Content-Type") ?? "application/octet-stream" });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
}
