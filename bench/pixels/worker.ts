import { DurableObject } from "cloudflare:workers";
import { decode as decodePng, encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { grayFromPng, grayFromPngNative, images } from "../../workers/lib/images.ts";
import { type LabelSpec, qrMatrix } from "../../workers/lib/label/render.ts";
import { makeResultThumb } from "../../workers/lib/thumbnail.ts";
import { compositeJs, renderLabelledJs } from "./label-js.ts";

// The Worker `npm run bench:pixels` (bench/pixels.ts) runs under `wrangler dev`: one Durable Object that does the
// pixel work a staged job's result needs, each way the ADR weighs (docs/decisions/0161-pixel-work-off-the-object.md),
// and answers a ping, so the bench can see from outside how long the object's thread is busy and how long a second
// request to the same object waits. Not part of the app's bundle.

interface Env {
  IMAGES: ImagesBinding;
  PIXELS: DurableObjectNamespace<PixelObject>;
  /** A service binding to this Worker itself: "a compiled codec off the object" by way of the stateless Worker. */
  SELF: Fetcher;
}

// The California profile's label (docs/decisions/0170-mls-profiles.md): the statement, then where the original is.
const LABEL: LabelSpec = {
  lines: ["Virtually staged photo", "Unaltered original: stagewise.example.com/o/abcdefghijklmnopqrstuvwx"],
  corner: "bottom-right",
  size: "medium",
  tone: "light",
  qrUrl: "https://stagewise.example.com/o/abcdefghijklmnopqrstuvwx",
};

/** A label-sized overlay (the medium label with its QR code on a 2304 px photo is about 990 x 300 px). */
function labelOverlay(): Uint8Array {
  const w = 990;
  const h = 300;
  const data = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++) data.set([255, 255, 255, 217], i * 4);
  const qr = qrMatrix(LABEL.qrUrl!);
  const m = Math.floor(240 / qr.length);
  qr.forEach((row, y) => {
    row.forEach((on, x) => {
      if (!on) return;
      for (let dy = 0; dy < m; dy++)
        for (let dx = 0; dx < m; dx++) data.set([0, 0, 0, 255], ((30 + y * m + dy) * w + 30 + x * m + dx) * 4);
    });
  });
  return encodePng({ width: w, height: h, data, channels: 4, depth: 8 });
}

/** Today's way to an analysis image, in JavaScript: full jpeg-js decode, box filter to `edge`, luma. */
function grayHere(bytes: Uint8Array, edge: number): { width: number; height: number; data: Uint8Array } {
  const img = jpeg.decode(bytes, { useTArray: true, maxMemoryUsageInMB: 256, maxResolutionInMP: 40 });
  const scale = Math.min(1, edge / Math.max(img.width, img.height));
  const tw = Math.max(1, Math.round(img.width * scale));
  const th = Math.max(1, Math.round(img.height * scale));
  const out = new Uint8Array(tw * th);
  for (let y = 0; y < th; y++) {
    const y0 = Math.floor(y / scale);
    const y1 = Math.max(y0 + 1, Math.min(img.height, Math.floor((y + 1) / scale)));
    for (let x = 0; x < tw; x++) {
      const x0 = Math.floor(x / scale);
      const x1 = Math.max(x0 + 1, Math.min(img.width, Math.floor((x + 1) / scale)));
      let sum = 0;
      let n = 0;
      for (let sy = y0; sy < y1; sy++) {
        for (let sx = x0; sx < x1; sx++) {
          const i = (sy * img.width + sx) * 4;
          sum += (img.data[i]! * 77 + img.data[i + 1]! * 150 + img.data[i + 2]! * 29) >> 8;
          n++;
        }
      }
      out[y * tw + x] = sum / n;
    }
  }
  return { width: tw, height: th, data: out };
}

const ok = (value: unknown) => Response.json(value);

/** The input as images.ts hands it over: one chunk. */
function oneChunk(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const chunk = bytes.slice();
  return new ReadableStream({
    start(c) {
      c.enqueue(chunk);
      c.close();
    },
  });
}

export class PixelObject extends DurableObject<Env> {
  #result: Uint8Array | null = null;
  #overlay = labelOverlay();
  #analysisPng: Uint8Array | null = null;
  /** A 64 x 48 JPEG: a binding call's fixed cost, with almost no bytes to move. */
  #tiny = new Uint8Array(jpeg.encode({ width: 64, height: 48, data: new Uint8Array(64 * 48 * 4).fill(128) }, 80).data);

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const op = url.pathname.replace(/^\/do\//, "");
    if (op === "ping") return new Response("pong");
    if (op === "setup") {
      this.#result = new Uint8Array(await request.arrayBuffer());
      const png = await this.env.IMAGES.input(new Blob([this.#result as Uint8Array<ArrayBuffer>]).stream())
        .transform({ width: 384, height: 384, fit: "scale-down" })
        .output({ format: "image/png" });
      this.#analysisPng = new Uint8Array(await new Response(png.image()).arrayBuffer());
      return ok({ bytes: this.#result.byteLength, analysisPng: this.#analysisPng.byteLength });
    }
    const result = this.#result;
    if (!result || !this.#analysisPng) return new Response("not set up", { status: 409 });
    const times = Number(url.searchParams.get("times") ?? 1);
    const viaBinding = images(this.env.IMAGES, { local: false });
    let size = 0;
    for (let i = 0; i < times; i++) {
      switch (op) {
        case "noop":
          size = 0;
          break;
        case "bytes-roundtrip":
          // What handing the result to a stream and reading a stream back costs this thread, with no service.
          size = (await new Response(new Blob([result as Uint8Array<ArrayBuffer>]).stream()).arrayBuffer()).byteLength;
          break;
        case "thumb-binding-tiny":
          size = (await viaBinding.thumbnail(this.#tiny)).byteLength;
          break;
        case "thumb-js":
          size = makeResultThumb(result).byteLength;
          break;
        case "thumb-binding":
          size = (await viaBinding.thumbnail(result)).byteLength;
          break;
        case "thumb-binding-blob": {
          const out = await this.env.IMAGES.input(new Blob([result as Uint8Array<ArrayBuffer>]).stream())
            .transform({ width: 400, height: 400, fit: "scale-down" })
            .output({ format: "image/jpeg", quality: 75 });
          size = (await new Response(out.image()).arrayBuffer()).byteLength;
          break;
        }
        case "thumb-remote-model": {
          // A model of production's binding: the bytes go to a service elsewhere (the bench's own Node process, which
          // only waits and answers 30 KB) and the object awaits it. No pixel work on these cores.
          const res = await fetch(`http://127.0.0.1:${url.searchParams.get("port")}/`, {
            method: "POST",
            body: oneChunk(result),
          });
          size = (await res.arrayBuffer()).byteLength;
          break;
        }
        case "thumb-self": {
          // Off the object by a service binding to the stateless Worker, which decodes with jpeg-js.
          const res = await this.env.SELF.fetch("http://self/worker/thumb-js", {
            method: "POST",
            body: result as Uint8Array<ArrayBuffer>,
          });
          size = (await res.arrayBuffer()).byteLength;
          break;
        }
        case "gray-js":
          size = grayHere(result, 384).data.length;
          break;
        case "gray-binding":
          size = (await viaBinding.analysisGray(result, 384)).data.length;
          break;
        case "gray-png-only": {
          const out = await this.env.IMAGES.input(oneChunk(result))
            .transform({ width: 384, height: 384, fit: "scale-down" })
            .output({ format: "image/png" });
          size = (await new Response(out.image()).arrayBuffer()).byteLength;
          break;
        }
        case "gray-decode-only":
          size = grayFromPng(this.#analysisPng).data.length;
          break;
        case "gray-decode-native":
          size = (await grayFromPngNative(this.#analysisPng)).data.length;
          break;
        case "png-decode-only":
          size = decodePng(this.#analysisPng).data.length;
          break;
        case "label-js":
          size = renderLabelledJs(result, LABEL).byteLength;
          break;
        case "label-draw":
          size = (await viaBinding.burnOverlay(result, this.#overlay, { bottom: 31, right: 31 })).byteLength;
          break;
        case "label-here":
          size = compositeJs(result, this.#overlay, { bottom: 31, right: 31 }).byteLength;
          break;
        default:
          return new Response(`unknown op ${op}`, { status: 404 });
      }
    }
    return ok({ op, size });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/worker/thumb-js") {
      return new Response(makeResultThumb(new Uint8Array(await request.arrayBuffer())) as Uint8Array<ArrayBuffer>);
    }
    if (url.pathname.startsWith("/do/")) return env.PIXELS.get(env.PIXELS.idFromName("bench")).fetch(request);
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
