import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { bearer, json, listen } from "./http.ts";
import { decodeImage, encodeJpeg, ImageTooLarge, type Raster } from "./images.ts";
import {
  invalidStaging,
  MESSAGES,
  PROVIDER_SKY_TYPES,
  REMOVAL_SIZE,
  refusal,
  SKY_LONG_EDGE,
  STAGE_SIZE,
  success,
  UPSCALE_MAX_BYTES,
  UPSCALE_MAX_EDGE,
} from "./provider-contract.ts";
import * as draw from "./provider-images.ts";
import { RenderPool, type StageTask, source } from "./provider-render.ts";

// The AI provider emulator: the provider's HTTP contract as its own repository
// documents it (shared spec provider-api.md; what it accepts and the shape of
// each answer in emulators/provider-contract.ts), with a bearer check. It does
// NOT generate AI images: it returns the input visibly transformed and labelled
// "EMULATED", so nobody can mistake it for the real thing. The JSON staging and
// removal calls answer with addresses of results it serves itself, as the
// provider's file host does. Tests steer it through POST /_emulator/mode: slow,
// fail with 500 or 429, hang, 200 with an error body, no images, JSON that is
// not JSON, or "drift": results that move a window and shift the ceiling line,
// as a provider that changes the room's architecture would (issue 33).

export type ProviderMode = "ok" | "fail500" | "fail429" | "hang" | "errorBody" | "empty" | "malformed" | "drift";

interface Control {
  mode: ProviderMode;
  latencyMs: number;
  /** Latencies for the next calls, one each, in order (then latencyMs again): a bench spreads them. */
  latencies: number[];
  /** How many more calls the mode applies to; -1 for all. Then it falls back to "ok". */
  remaining: number;
  /** Every n-th call (counted from the last POST /_emulator/mode) answers 500; 0 for none. */
  failEvery: number;
}

/** Results it keeps to serve by address (the oldest go first). */
const KEPT_RESULTS = 200;
/**
 * Encoded results it keeps by what drew them (docs/decisions/0320): a call whose input bytes and drawing options
 * match an earlier one's gets the same bytes without drawing them again. About 0.3-0.6 MB each at 2304 px.
 */
const KEPT_RENDERS = 48;
const FILES = "/customer-images/";
const ENDPOINTS = [
  "/generate_designs_for_room",
  "/generate_designs",
  "/replace_sky_behind_house",
  "/remove_objects_from_room",
  "/upscale_image",
];
/** Fields logged as numbers whichever form (JSON or multipart) carried them. */
const NUMERIC = new Set(["num_images", "seed", "scale_factor", "design_creativity", "design_style_image_strength"]);

type Fields = Record<string, unknown>;

function parseMultipart(req: IncomingMessage, body: Buffer): { fields: Fields; file: Buffer | null } {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers["content-type"] ?? "");
  const boundary = m?.[1] ?? m?.[2];
  const fields: Fields = {};
  let file: Buffer | null = null;
  if (!boundary) return { fields, file };
  const delim = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delim);
  while (start !== -1) {
    const next = body.indexOf(delim, start + delim.length);
    if (next === -1) break;
    const part = body.subarray(start + delim.length + 2, next - 2);
    const headerEnd = part.indexOf("\r\n\r\n");
    const name = /name="([^"]+)"/.exec(part.subarray(0, headerEnd).toString("utf8"))?.[1];
    const value = part.subarray(headerEnd + 4);
    if (name === "input_image") file = value.length > 0 ? value : null;
    else if (name) fields[name] = value.toString("utf8");
    start = next;
  }
  return { fields, file };
}

function parseJsonBody(body: Buffer): Fields | null {
  try {
    const v = JSON.parse(body.toString("utf8") || "{}") as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Fields) : null;
  } catch {
    return null;
  }
}

/** The fields a call carried, as logged: numbers as numbers, nothing absent. */
function logged(fields: Fields): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || v === null) continue;
    out[k] = NUMERIC.has(k) && typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return out;
}

async function fetchImage(url: string): Promise<Uint8Array | null> {
  try {
    const res = await fetch(url);
    if (!res.ok) return null;
    return new Uint8Array(await res.arrayBuffer());
  } catch {
    return null;
  }
}

/** An input the emulator fetched or received: its bytes, their digest, and the picture decoded only when drawn. */
interface Input {
  bytes: Uint8Array;
  sha256: string;
  raster(): Raster;
}

function inputOf(bytes: Uint8Array): Input {
  let decoded: Raster | undefined;
  return {
    bytes,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    raster: () => (decoded ??= source(bytes)),
  };
}

export async function startProviderEmulator(opts: { port: number; apiKey: string }) {
  const control: Control = { mode: "ok", latencyMs: 0, latencies: [], remaining: -1, failEvery: 0 };
  let calls = 0;
  /** Calls since the last POST /_emulator/mode (failEvery counts these). */
  let sinceMode = 0;
  /** Calls being answered now, and the most at once since the last POST /_emulator/mode: a bench reads it. */
  let inFlight = 0;
  let maxInFlight = 0;
  /**
   * What each answered call asked for (never the image bytes), when it came (`at`, epoch ms), its own time (`ms`)
   * and how long fetching its input address took (`input_fetch_ms`): tests and the bench read it from
   * GET /_emulator/requests.
   */
  const requests: Record<string, unknown>[] = [];
  const files = new Map<string, Uint8Array>();
  /**
   * Encoded results by what drew them (the call's path and mode, its input's digest and every option the drawing
   * reads): the drawing is a pure function of these, so a repeated call gets the bytes it would have drawn. The
   * answer's time is unchanged (the latency); only this machine's CPU is spared (docs/decisions/0320).
   */
  const renders = new Map<string, Uint8Array>();
  let rendered = 0;
  let reused = 0;
  /** Staging results are drawn in worker threads (provider-render.ts), started at the first staging call. */
  let pool: RenderPool | undefined;

  /** Keeps drawn bytes by their key, the oldest unused going first. */
  function keep(key: string, bytes: Uint8Array): void {
    renders.delete(key);
    renders.set(key, bytes);
    for (const old of renders.keys()) {
      if (renders.size <= KEPT_RENDERS) break;
      renders.delete(old);
    }
  }

  /** A staging call's results, one per key: those no identical call drew before are drawn off the event loop. */
  async function drawnStage(keys: string[], task: StageTask): Promise<Uint8Array[]> {
    const found = keys.map((k) => renders.get(k));
    const missing = keys.map((_, i) => i).filter((i) => !found[i]);
    for (const [i, bytes] of found.entries()) if (bytes) keep(keys[i]!, bytes);
    reused += keys.length - missing.length;
    if (missing.length > 0) {
      for (const i of missing)
        if (process.env.PROVIDER_EMULATOR_TRACE) console.error(`provider emulator: drawing ${keys[i]}`);
      pool ??= new RenderPool();
      const drawn = await pool.render({ ...task, drawings: missing.map((i) => task.drawings[i]!) });
      for (const [j, i] of missing.entries()) {
        found[i] = drawn[j]!;
        keep(keys[i]!, drawn[j]!);
      }
      rendered += missing.length;
    }
    return found as Uint8Array[];
  }

  /**
   * The bytes drawn for `key`, drawn now only if no identical call was drawn before (GET/POST /_emulator/mode counts
   * both: `rendered`, `reused`; the request log stays what the call asked for).
   */
  function encoded(key: string, drawIt: () => Raster): Uint8Array {
    const kept = renders.get(key);
    if (kept) {
      // Most recently used last, so the oldest unused go first.
      renders.delete(key);
      renders.set(key, kept);
      reused++;
      return kept;
    }
    if (process.env.PROVIDER_EMULATOR_TRACE) console.error(`provider emulator: drawing ${key}`);
    const bytes = encodeJpeg(drawIt());
    renders.set(key, bytes);
    for (const old of renders.keys()) {
      if (renders.size <= KEPT_RENDERS) break;
      renders.delete(old);
    }
    rendered++;
    return bytes;
  }

  const server = await listen("provider", opts.port, async (req, body, res) => {
    try {
      return await answer(req, body, res);
    } catch (err) {
      if (err instanceof ImageTooLarge) return json(res, 200, refusal(err.message));
      throw err;
    }
  });
  server.on("close", () => void pool?.close());
  return server;

  /**
   * Keeps a result to serve at an address on this host, as the provider's file host does: a new address every call,
   * whether its bytes were drawn now or by an identical earlier call.
   */
  function publish(
    req: IncomingMessage,
    bytes: Uint8Array,
    size: { width: number; height: number },
  ): { uuid: string; url: string; width: number; height: number } {
    const uuid = randomUUID();
    files.set(uuid, bytes);
    for (const old of files.keys()) {
      if (files.size <= KEPT_RESULTS) break;
      files.delete(old);
    }
    return { uuid, url: `http://${req.headers.host}${FILES}${uuid}.jpg`, ...size };
  }

  function inline(img: Raster): { uuid: string; data: string } {
    return { uuid: randomUUID(), data: Buffer.from(encodeJpeg(img)).toString("base64") };
  }

  function inlineBytes(bytes: Uint8Array): { uuid: string; data: string } {
    return { uuid: randomUUID(), data: Buffer.from(bytes).toString("base64") };
  }

  async function answer(req: IncomingMessage, body: Buffer, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/_emulator/mode") {
      if (req.method === "POST") {
        const next = JSON.parse(body.toString("utf8") || "{}") as Partial<Control> & { times?: number };
        control.mode = next.mode ?? "ok";
        control.latencyMs = next.latencyMs ?? 0;
        control.latencies = Array.isArray(next.latencies) ? next.latencies.map(Number).filter((n) => n >= 0) : [];
        control.remaining = next.times ?? -1;
        control.failEvery = Number.isInteger(next.failEvery) && next.failEvery! > 0 ? next.failEvery! : 0;
        sinceMode = 0;
        maxInFlight = inFlight;
      }
      return json(res, 200, { ...control, calls, inFlight, maxInFlight, rendered, reused });
    }
    if (url.pathname === "/_emulator/requests" && req.method === "GET") return json(res, 200, requests.slice(-200));
    if (url.pathname.startsWith(FILES) && req.method === "GET") {
      const bytes = files.get(url.pathname.slice(FILES.length).replace(/\.jpg$/, ""));
      if (!bytes) return json(res, 404, { error: "NotFound", message: "No such file" });
      res.writeHead(200, { "Content-Type": "image/jpeg", "Content-Length": bytes.byteLength }).end(bytes);
      return;
    }
    if (req.method !== "POST" || !ENDPOINTS.includes(url.pathname))
      return json(res, 404, { error: "NotFound", message: "Unknown endpoint" });
    if (bearer(req) !== opts.apiKey) return json(res, 401, { error: "Unauthorized", message: "Invalid API key" });
    calls++;
    sinceMode++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // The call's own time, from its whole body received to its answer written (the configured latency and the image
    // work): a bench subtracts it from a job's time to get ours without the emulator's image work in it.
    const started = performance.now();
    const at = Date.now();
    let entry: Record<string, unknown> | undefined;
    const log = (e: Record<string, unknown>) => {
      entry = { path: url.pathname, ...e };
      requests.push(entry);
      return entry;
    };
    try {
      return await answerCall(req, body, res, url.pathname, log);
    } finally {
      inFlight--;
      if (entry) Object.assign(entry, { at, ms: Math.round((performance.now() - started) * 10) / 10 });
    }
  }

  /** The input behind an address, timed into the log entry; null when it cannot be fetched. */
  async function fetchInput(address: string, entry: Record<string, unknown>): Promise<Input | null> {
    const t = performance.now();
    // When the fetch began (epoch ms): the bench's job split takes it out of the provider's own time.
    entry.input_fetch_at = Date.now();
    const bytes = await fetchImage(address);
    entry.input_fetch_ms = Math.round((performance.now() - t) * 10) / 10;
    return bytes ? inputOf(bytes) : null;
  }

  async function answerCall(
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    path: string,
    log: (entry: Record<string, unknown>) => Record<string, unknown>,
  ) {
    const mode = control.failEvery > 0 && sinceMode % control.failEvery === 0 ? "fail500" : control.mode;
    if (control.remaining > 0 && --control.remaining === 0) control.mode = "ok";
    const wait = control.latencies.shift() ?? control.latencyMs;
    // The latency is the provider's own time for a call, its image work included: the answer comes `wait` ms after
    // the call arrived plus the time its input took to fetch from the caller's address (the caller's cost, kept
    // visible), or when the image work ends if that is later. The image work runs during the wait, as a provider's
    // GPU does, not after it (docs/decisions/0305).
    const arrived = performance.now();
    if (mode === "ok" || mode === "drift") {
      let entry: Record<string, unknown> | undefined;
      const value = await designCall(req, body, path, (e) => (entry = log(e)), mode === "drift");
      const left = arrived + wait + Number(entry?.input_fetch_ms ?? 0) - performance.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
      return json(res, 200, value);
    }
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    switch (mode) {
      case "hang":
        return; // never answers; the caller's timeout must fire
      case "fail500":
        res.writeHead(500, "Internal Server Error").end("provider exploded");
        return;
      case "fail429":
        res.writeHead(429, "Too Many Requests").end("slow down");
        return;
      case "errorBody":
        return json(res, 200, refusal("The image could not be processed."));
      case "empty":
        return json(res, 200, success("", {}));
      case "malformed":
        res.writeHead(200, { "Content-Type": "application/json" }).end("{not json");
        return;
    }
  }

  /** A design call's answer (a success or the provider's refusal), its image work done: the JSON the call gets. */
  async function designCall(
    req: IncomingMessage,
    body: Buffer,
    path: string,
    log: (entry: Record<string, unknown>) => Record<string, unknown>,
    drift: boolean,
  ): Promise<unknown> {
    // Drift: the results change the room's architecture (the structure check must refuse them).
    const shaped = (img: Raster) => (drift ? draw.drift(img) : img);
    const multipart = path === "/generate_designs" || path === "/upscale_image";
    const parsed = multipart ? parseMultipart(req, body) : { fields: parseJsonBody(body), file: null };
    if (!parsed.fields) return refusal("The body must be a JSON object");
    const f = parsed.fields;
    const file = parsed.file;
    const entry = log({
      ...(file ? { input_image_sha256: createHash("sha256").update(file).digest("hex") } : {}),
      ...logged(f),
    });

    if (path === "/upscale_image") {
      if (!file) return refusal("input_image is required");
      if (file.byteLength > UPSCALE_MAX_BYTES) return refusal("The image must be at most 4 MB.");
      const factor = Number(f.scale_factor ?? 2);
      if (!Number.isInteger(factor) || factor < 1 || factor > 8) return refusal("scale_factor must be 1 to 8");
      const img = decodeImage(file);
      if (Math.max(img.width, img.height) > UPSCALE_MAX_EDGE)
        return refusal(`Images of up to ${UPSCALE_MAX_EDGE}px width or height are supported.`);
      const out = draw.upscale(img, factor);
      const data = Buffer.from(encodeJpeg(out)).toString("base64");
      return success(MESSAGES.upscale, { upscaled_image: data });
    }

    if (path === "/generate_designs" || path === "/generate_designs_for_room") {
      const invalid = invalidStaging(f);
      if (invalid) return refusal(invalid);
      const room = String(f.room_type ?? "livingroom");
      const style = String(f.design_style ?? "modern");
      const numImages = Number(f.num_images ?? 1);
      const seed = f.seed === undefined ? null : Number(f.seed);
      // scale_factor is documented for the JSON call only; the legacy call answers at its sample size.
      const scale = path === "/generate_designs_for_room" && f.scale_factor !== undefined ? Number(f.scale_factor) : 1;
      const [width, height] = [STAGE_SIZE.width * scale, STAGE_SIZE.height * scale];
      if (path === "/generate_designs") {
        // No file: the provider's "design without photo" mode invents a room (and charges for it).
        const base = file ? source(file) : null;
        const images = Array.from({ length: numImages }, (_, i) =>
          inline(
            base
              ? stageOne(base, width, height, stageDrawing(f, room, style, numImages, seed, undefined, i))
              : draw.inventedRoom(width, height, room, style),
          ),
        );
        return success(MESSAGES.stage, { images });
      }
      if (typeof f.input_image_url !== "string" || !f.input_image_url) return refusal("input_image_url is required");
      const input = await fetchInput(f.input_image_url, entry);
      if (!input) return refusal("input_image_url could not be fetched");
      let reference: draw.StageDrawing["reference"];
      if (typeof f.design_style_image_url === "string") {
        const ref = await fetchImage(f.design_style_image_url);
        if (!ref) return refusal("design_style_image_url could not be fetched");
        reference = { colour: draw.meanColour(source(ref)), strength: Number(f.design_style_image_strength ?? 0.82) };
      }
      const drawings = Array.from({ length: numImages }, (_, i) =>
        stageDrawing(f, room, style, numImages, seed, reference, i),
      );
      // Everything a drawing reads: the drawing itself, the size, drift, and the input by its digest (its address
      // differs every call).
      const keys = drawings.map((d) => JSON.stringify({ path, drift, input: input.sha256, width, height, d }));
      const drawScale = Math.round(width / STAGE_SIZE.width);
      const bytes = await drawnStage(keys, { input: input.bytes, width, height, scale: drawScale, drift, drawings });
      return success(MESSAGES.stage, { images: bytes.map((b) => publish(req, b, { width, height })) });
    }

    if (typeof f.input_image_url !== "string" || !f.input_image_url) return refusal("input_image_url is required");
    if (path === "/replace_sky_behind_house") {
      const skyType = String(f.sky_type ?? "").toLowerCase();
      if (!PROVIDER_SKY_TYPES.has(skyType)) return refusal("sky_type must be day, dusk or night");
      const input = await fetchInput(f.input_image_url, entry);
      if (!input) return refusal("input_image_url could not be fetched");
      const bytes = encoded(JSON.stringify({ path, drift, input: input.sha256, skyType }), () => {
        const img = input.raster();
        const k = SKY_LONG_EDGE / Math.max(img.width, img.height);
        return shaped(draw.sky(img, Math.round(img.width * k), Math.round(img.height * k), skyType));
      });
      return success(MESSAGES.sky, { images: [inlineBytes(bytes)] });
    }
    // /remove_objects_from_room: one object in info.image, not a list.
    const input = await fetchInput(f.input_image_url, entry);
    if (!input) return refusal("input_image_url could not be fetched");
    let mask: Input | null = null;
    if (typeof f.mask_image_url === "string") {
      const bytes = await fetchImage(f.mask_image_url);
      if (!bytes) return refusal("mask_image_url could not be fetched");
      mask = inputOf(bytes);
    }
    const key = JSON.stringify({ path, drift, input: input.sha256, mask: mask?.sha256 ?? null });
    const bytes = encoded(key, () =>
      shaped(draw.removal(input.raster(), REMOVAL_SIZE.width, REMOVAL_SIZE.height, mask?.raster() ?? null)),
    );
    return success(MESSAGES.removal, { image: publish(req, bytes, REMOVAL_SIZE) });
  }
}

function stageDrawing(
  f: Fields,
  room: string,
  style: string,
  of: number,
  seed: number | null,
  reference: draw.StageDrawing["reference"],
  index: number,
): draw.StageDrawing {
  return { room, style, options: draw.optionLine(f), variation: { index, of, seed }, reference };
}

function stageOne(input: Raster, width: number, height: number, drawing: draw.StageDrawing): Raster {
  return draw.stage(input, width, height, drawing, Math.round(width / STAGE_SIZE.width));
}
