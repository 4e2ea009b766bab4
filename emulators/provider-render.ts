import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { blank, decodeImage, encodeJpeg, ImageTooLarge, type Raster, shrinkToFit } from "./images.ts";
import * as draw from "./provider-images.ts";
import { loadSharp } from "./sharp.ts";

// The provider emulator's staging results drawn off its event loop (docs/decisions/0320): a few worker threads
// decode the input, draw each variation and encode it, so four calls at once draw side by side on the machine's
// cores instead of one after another on the thread that also fetches inputs, serves results and answers calls.
// What is drawn is exactly what emulators/provider.ts drew inline (provider-images.ts's `stage`).

/** The emulator decodes inputs at most this large before resizing them to an answer's size. */
export const MAX_EDGE = 1600;

/** An input the emulator can read, shrunk to MAX_EDGE; a plain canvas for bytes it cannot read. */
export function source(bytes: Uint8Array): Raster {
  try {
    return shrinkToFit(decodeImage(bytes), MAX_EDGE);
  } catch (err) {
    if (err instanceof ImageTooLarge) throw err;
    return blank(800, 600, [200, 200, 200]); // not an image the emulator can read: a plain canvas
  }
}

export interface StageTask {
  input: Uint8Array;
  width: number;
  height: number;
  scale: number;
  drift: boolean;
  drawings: draw.StageDrawing[];
}

type Answer = { id: number; images: Uint8Array[] } | { id: number; tooLarge: string } | { id: number; error: string };

/**
 * A JPEG at quality 80 by sharp (libvips, which wrangler installs and emulators/images-draw.ts uses): about 50 ms for
 * 2304 px where the JavaScript encoder takes 400-650 ms quiet, seconds loaded. The JavaScript encoder where sharp
 * cannot load.
 */
async function jpegOf(img: Raster): Promise<Uint8Array> {
  const sharp = await loadSharp();
  if (!sharp) return encodeJpeg(img);
  const raw = Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
  const out = await sharp(raw, { raw: { width: img.width, height: img.height, channels: 4 } })
    .jpeg({ quality: 80 })
    .toBuffer();
  return new Uint8Array(out);
}

/** The last inputs this thread decoded, by their bytes' digest (a listing often sends one photo's bytes many times). */
const decoded = new Map<string, Raster>();

function decodedOnce(bytes: Uint8Array): Raster {
  const sha = createHash("sha256").update(bytes).digest("hex");
  const kept = decoded.get(sha);
  if (kept) return kept;
  const img = source(bytes);
  decoded.set(sha, img);
  for (const old of decoded.keys()) {
    if (decoded.size <= 8) break;
    decoded.delete(old);
  }
  return img;
}

/** Draws and encodes every drawing of a task (in a worker thread). The input is only read, never drawn on. */
export async function renderStage(task: StageTask): Promise<Uint8Array[]> {
  const input = decodedOnce(task.input);
  const out: Uint8Array[] = [];
  for (const d of task.drawings) {
    const img = draw.stage(input, task.width, task.height, d, task.scale);
    out.push(await jpegOf(task.drift ? draw.drift(img) : img));
  }
  return out;
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on("message", async ({ id, task }: { id: number; task: StageTask }) => {
    let answer: Answer;
    try {
      answer = { id, images: await renderStage(task) };
    } catch (err) {
      answer =
        err instanceof ImageTooLarge
          ? { id, tooLarge: err.message }
          : { id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(answer, "images" in answer ? answer.images.map((b) => b.buffer as ArrayBuffer) : []);
  });
}

/** A pool of render threads; each task goes to the thread with the fewest waiting. */
export class RenderPool {
  #workers: { worker: Worker; held: Set<number> }[] = [];
  #waiting = new Map<number, { resolve: (images: Uint8Array[]) => void; reject: (err: Error) => void }>();
  #next = 0;

  constructor(size = Math.max(1, Math.min(4, availableParallelism()))) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL(import.meta.url));
      // The emulator's process may end while a thread idles.
      worker.unref();
      const slot = { worker, held: new Set<number>() };
      worker.on("message", (answer: Answer) => {
        slot.held.delete(answer.id);
        const waiter = this.#waiting.get(answer.id);
        this.#waiting.delete(answer.id);
        if (!waiter) return;
        if ("images" in answer) waiter.resolve(answer.images.map((b) => new Uint8Array(b)));
        else if ("tooLarge" in answer) waiter.reject(new ImageTooLarge(answer.tooLarge));
        else waiter.reject(new Error(answer.error));
      });
      worker.on("error", (err) => {
        // A thread that died fails what it held; the others carry on.
        for (const id of slot.held) {
          this.#waiting.get(id)?.reject(err);
          this.#waiting.delete(id);
        }
        slot.held.clear();
      });
      this.#workers.push(slot);
    }
  }

  render(task: StageTask): Promise<Uint8Array[]> {
    const slot = this.#workers.reduce((a, b) => (b.held.size < a.held.size ? b : a));
    const id = this.#next++;
    slot.held.add(id);
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      // The input is copied (the caller may reuse its bytes); results come back transferred.
      slot.worker.postMessage({ id, task });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.worker.terminate()));
  }
}
