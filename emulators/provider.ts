import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { bearer, json, listen } from "./http.ts";
import {
  blank,
  decodeImage,
  drawBanner,
  encodeJpeg,
  fillRect,
  ImageTooLarge,
  mapPixels,
  type Raster,
  shrinkToFit,
} from "./images.ts";

// The AI provider emulator: the same HTTP contract as the real provider
// (shared spec provider-api.md), with a bearer check. It does NOT generate AI
// images: it returns the input visibly transformed and labelled "EMULATED", so
// nobody can mistake it for the real thing. Tests steer it through
// POST /_emulator/mode: slow, fail with 500 or 429, hang, 200 with an error
// body, an empty list, or JSON that is not JSON.

export type ProviderMode = "ok" | "fail500" | "fail429" | "hang" | "errorBody" | "empty" | "malformed";

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

const MAX_EDGE = 1600;

function parseMultipart(req: IncomingMessage, body: Buffer): Record<string, { value: Buffer; filename?: string }> {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers["content-type"] ?? "");
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return {};
  const parts: Record<string, { value: Buffer; filename?: string }> = {};
  const delim = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delim);
  while (start !== -1) {
    const next = body.indexOf(delim, start + delim.length);
    if (next === -1) break;
    const part = body.subarray(start + delim.length + 2, next - 2);
    const headerEnd = part.indexOf("\r\n\r\n");
    const headers = part.subarray(0, headerEnd).toString("utf8");
    const name = /name="([^"]+)"/.exec(headers)?.[1];
    const filename = /filename="([^"]*)"/.exec(headers)?.[1];
    if (name) parts[name] = { value: part.subarray(headerEnd + 4), ...(filename !== undefined ? { filename } : {}) };
    start = next;
  }
  return parts;
}

function source(bytes: Uint8Array | null): Raster {
  if (bytes) {
    try {
      return shrinkToFit(decodeImage(bytes), MAX_EDGE);
    } catch (err) {
      if (err instanceof ImageTooLarge) throw err;
      // anything else: a plain canvas
    }
  }
  return blank(800, 600, [200, 200, 200]);
}

/** The provider refuses unknown codes like any invalid input: 200 with an error body. */
function invalidOption(o: Record<string, string | undefined>): string | null {
  if (o.color_scheme !== undefined && !/^COLOR_SCHEME_([0-9]|1[0-9]|20)$/.test(o.color_scheme))
    return `color_scheme must be one of COLOR_SCHEME_0 ... COLOR_SCHEME_20`;
  if (o.speciality_decor !== undefined && !/^SPECIALITY_DECOR_[0-7]$/.test(o.speciality_decor))
    return `speciality_decor must be one of SPECIALITY_DECOR_0 ... SPECIALITY_DECOR_7`;
  if (o.keep_original_floor !== undefined && !["true", "false"].includes(o.keep_original_floor))
    return "keep_original_floor must be true or false";
  return null;
}

/** What the emulated image says about the options it received, so a test (or a person) can see they arrived. */
function optionLine(o: Record<string, string | undefined>): string | null {
  const parts = [
    o.color_scheme?.replace("COLOR_SCHEME_", "palette "),
    o.speciality_decor?.replace("SPECIALITY_DECOR_", "decor "),
    o.keep_original_floor === "true" && "floor kept",
    o.prompt && `prompt ${o.prompt.length} chars`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : null;
}

/** Each variation of one call is visibly different: its own sofa colour, and its number and seed on a banner. */
const VARIATION_SOFAS: [number, number, number][] = [
  [92, 107, 138],
  [138, 92, 92],
  [92, 138, 104],
  [128, 112, 70],
];

function stage(
  img: Raster,
  room: string,
  style: string,
  options: string | null = null,
  variation: { index: number; of: number; seed: number | null } = { index: 0, of: 1, seed: null },
): Raster {
  // Warm the room and drop simple "furniture" blocks in the lower third.
  mapPixels(img, (r, g, b) => [r * 0.95 + 18, g * 0.93 + 10, b * 0.85]);
  const w = img.width;
  const h = img.height;
  const sofa = VARIATION_SOFAS[variation.index % VARIATION_SOFAS.length]!;
  fillRect(img, w * 0.12, h * 0.62, w * 0.46, h * 0.16, sofa); // sofa
  fillRect(img, w * 0.12, h * 0.54, w * 0.46, h * 0.09, [sofa[0] + 18, sofa[1] + 19, sofa[2] + 20]);
  fillRect(img, w * 0.64, h * 0.7, w * 0.2, h * 0.05, [150, 111, 74]); // table
  fillRect(img, w * 0.1, h * 0.8, w * 0.8, h * 0.06, [196, 168, 130], 0.8); // rug
  const bh = drawBanner(img, "EMULATED STAGING - NOT AI", 0);
  const bh2 = drawBanner(img, `${room} / ${style}`, bh);
  const bh3 = options ? drawBanner(img, options.toUpperCase(), bh + bh2) : 0;
  if (variation.of > 1 || variation.seed !== null) {
    const seed = variation.seed === null ? "" : ` SEED ${variation.seed}`;
    drawBanner(img, `VARIATION ${variation.index + 1}/${variation.of}${seed}`, bh + bh2 + bh3);
  }
  return img;
}

const SKIES: Record<string, [[number, number, number], [number, number, number]]> = {
  day: [
    [86, 156, 232],
    [190, 222, 250],
  ],
  dusk: [
    [62, 48, 110],
    [246, 152, 96],
  ],
  night: [
    [8, 12, 34],
    [30, 42, 84],
  ],
};

function sky(img: Raster, skyType: string): Raster {
  const [top, bottom] = SKIES[skyType] ?? SKIES.day!;
  const horizon = Math.round(img.height * 0.38);
  mapPixels(img, (r, g, b, x, y) => {
    if (y >= horizon)
      return skyType === "night"
        ? [r * 0.55, g * 0.6, b * 0.75]
        : skyType === "dusk"
          ? [r * 0.9 + 12, g * 0.8, b * 0.8]
          : [r, g, b];
    const t = y / horizon;
    const star = skyType === "night" && (x * 7919 + y * 104729) % 997 === 0 ? 200 : 0;
    return [
      top[0] + (bottom[0] - top[0]) * t + star,
      top[1] + (bottom[1] - top[1]) * t + star,
      top[2] + (bottom[2] - top[2]) * t + star,
    ];
  });
  drawBanner(img, `EMULATED SKY: ${skyType} - NOT AI`, img.height - 11 * Math.max(2, Math.floor(img.width / 260)));
  return img;
}

function removal(img: Raster): Raster {
  // Soften and lighten everything below the midline, as if the floor were cleared.
  mapPixels(img, (r, g, b, _x, y) => {
    if (y < img.height * 0.5) return [r, g, b];
    const avg = (r + g + b) / 3;
    return [avg * 0.4 + 140, avg * 0.4 + 134, avg * 0.4 + 124];
  });
  drawBanner(img, "EMULATED FURNITURE REMOVAL - NOT AI", 0);
  return img;
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

export async function startProviderEmulator(opts: { port: number; apiKey: string }) {
  const control: Control = { mode: "ok", latencyMs: 0, latencies: [], remaining: -1, failEvery: 0 };
  let calls = 0;
  /** Calls since the last POST /_emulator/mode (failEvery counts these). */
  let sinceMode = 0;
  /** Calls being answered now, and the most at once since the last POST /_emulator/mode: a bench reads it. */
  let inFlight = 0;
  let maxInFlight = 0;
  /**
   * What each answered call asked for (never the image bytes), when it came (`at`, epoch ms) and its own time (`ms`):
   * tests and the bench read it from GET /_emulator/requests.
   */
  const requests: Record<string, unknown>[] = [];
  return listen("provider", opts.port, async (req, body, res) => {
    try {
      return await answer(req, body, res);
    } catch (err) {
      if (err instanceof ImageTooLarge) return json(res, 200, { error: "InvalidInput", message: err.message });
      throw err;
    }
  });

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
      return json(res, 200, { ...control, calls, inFlight, maxInFlight });
    }
    if (url.pathname === "/_emulator/requests" && req.method === "GET") return json(res, 200, requests.slice(-200));
    if (req.method !== "POST") return json(res, 404, { error: "NotFound", message: "Unknown endpoint" });
    if (bearer(req) !== opts.apiKey) return json(res, 401, { error: "Unauthorized", message: "Invalid API key" });
    // The endpoints of the provider's current SDK (decor8ai 2.0.1) and the older ones of our spec.
    const known = [
      "/generate_designs_for_room",
      "/generate_designs",
      "/replace_sky_behind_house",
      "/replace_sky",
      "/remove_objects_from_room",
    ];
    if (!known.includes(url.pathname)) return json(res, 404, { error: "NotFound", message: "Unknown endpoint" });
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
      entry = e;
      requests.push(e);
    };
    try {
      return await answerCall(req, body, res, url, log);
    } finally {
      inFlight--;
      if (entry) Object.assign(entry, { at, ms: Math.round((performance.now() - started) * 10) / 10 });
    }
  }

  async function answerCall(
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    url: URL,
    log: (entry: Record<string, unknown>) => void,
  ) {
    const mode = control.failEvery > 0 && sinceMode % control.failEvery === 0 ? "fail500" : control.mode;
    if (control.remaining > 0 && --control.remaining === 0) control.mode = "ok";
    const wait = control.latencies.shift() ?? control.latencyMs;
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
        return json(res, 200, { error: "InvalidInput", message: "The image could not be processed." });
      case "empty":
        return json(res, 200, url.pathname === "/replace_sky" ? { info: {} } : { info: { images: [] } });
      case "malformed":
        res.writeHead(200, { "Content-Type": "application/json" }).end("{not json");
        return;
    }

    let out: Raster;
    if (url.pathname === "/generate_designs" || url.pathname === "/generate_designs_for_room") {
      const multipart = url.pathname === "/generate_designs";
      let fields: Record<string, string | undefined>;
      let input: Uint8Array | null;
      if (multipart) {
        const parts = parseMultipart(req, body);
        fields = Object.fromEntries(
          Object.entries(parts)
            .filter(([k]) => k !== "input_image")
            .map(([k, v]) => [k, v.value.toString()]),
        );
        input = parts.input_image?.value.length ? parts.input_image.value : null;
        if (!input) return json(res, 200, { error: "InvalidInput", message: "input_image is required" });
      } else {
        const parsed = parseJsonBody(body);
        if (!parsed) return json(res, 200, { error: "InvalidInput", message: "The body must be a JSON object" });
        fields = Object.fromEntries(
          Object.entries(parsed).map(([k, v]) => [k, v === undefined || v === null ? undefined : String(v)]),
        );
        if (!fields.input_image_url)
          return json(res, 200, { error: "InvalidInput", message: "input_image_url is required" });
        input = null;
      }
      const options = {
        color_scheme: fields.color_scheme,
        speciality_decor: fields.speciality_decor,
        keep_original_floor: fields.keep_original_floor,
        prompt: fields.prompt,
      };
      const invalid = invalidOption(options);
      if (invalid) return json(res, 200, { error: "InvalidInput", message: invalid });
      const numImages = Number(fields.num_images ?? "1");
      if (!Number.isInteger(numImages) || numImages < 1 || numImages > 4)
        return json(res, 200, { error: "InvalidInput", message: "num_images must be between 1 and 4" });
      const seed = fields.seed !== undefined && /^\d{1,10}$/.test(fields.seed) ? Number(fields.seed) : null;
      log({
        path: url.pathname,
        // An uploaded image is logged by its digest, so a test can tell which bytes were sent.
        ...(multipart
          ? { input_image_sha256: createHash("sha256").update(input!).digest("hex") }
          : { input_image_url: fields.input_image_url }),
        room_type: fields.room_type,
        design_style: fields.design_style,
        num_images: numImages,
        seed,
        ...options,
      });
      if (!input) {
        input = await fetchImage(fields.input_image_url!);
        if (!input) return json(res, 200, { error: "InvalidInput", message: "input_image_url could not be fetched" });
      }
      const images = [];
      for (let i = 0; i < numImages; i++) {
        const img = stage(
          source(input),
          fields.room_type ?? "livingroom",
          fields.design_style ?? "modern",
          optionLine(options),
          { index: i, of: numImages, seed },
        );
        images.push({ data: Buffer.from(encodeJpeg(img)).toString("base64") });
      }
      return json(res, 200, { info: { images } });
    }
    const input = parseJsonBody(body) as { input_image_url?: string; sky_type?: string } | null;
    if (!input?.input_image_url)
      return json(res, 200, { error: "InvalidInput", message: "input_image_url is required" });
    log({ path: url.pathname, input_image_url: input.input_image_url, sky_type: input.sky_type });
    const bytes = await fetchImage(input.input_image_url);
    if (!bytes) return json(res, 200, { error: "InvalidInput", message: "input_image_url could not be fetched" });
    if (url.pathname === "/replace_sky" || url.pathname === "/replace_sky_behind_house") {
      if (!["day", "dusk", "night"].includes(input.sky_type ?? "")) {
        return json(res, 200, { error: "InvalidInput", message: "sky_type must be day, dusk or night" });
      }
      out = sky(source(bytes), input.sky_type!);
      const data = Buffer.from(encodeJpeg(out)).toString("base64");
      // The current endpoint answers a list like every other; the older one a single output_image.
      return json(
        res,
        200,
        url.pathname === "/replace_sky" ? { info: { output_image: data } } : { info: { images: [{ data }] } },
      );
    }
    out = removal(source(bytes));
    return json(res, 200, { info: { images: [{ data: Buffer.from(encodeJpeg(out)).toString("base64") }] } });
  }
}

function parseJsonBody(body: Buffer): Record<string, unknown> | null {
  try {
    const v = JSON.parse(body.toString("utf8") || "{}") as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
