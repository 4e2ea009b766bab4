import { blank, drawBanner, fillRect, mapPixels, meanColour, type Raster, resize } from "./images.ts";

// What the provider emulator draws. It does NOT generate AI images: each result
// is the input visibly transformed and labelled "EMULATED ... NOT AI", at the
// sizes the provider's own samples show (emulators/provider-contract.ts).

/** What the emulated image says about the options it received, so a test (or a person) can see they arrived. */
export function optionLine(o: Record<string, unknown>): string | null {
  const parts = [
    typeof o.color_scheme === "string" && o.color_scheme.replace("COLOR_SCHEME_", "palette "),
    typeof o.speciality_decor === "string" && o.speciality_decor.replace("SPECIALITY_DECOR_", "decor "),
    o.design_creativity !== undefined && `creativity ${o.design_creativity}`,
    typeof o.prompt === "string" && `prompt ${o.prompt.length} chars`,
    o.design_style_image_url !== undefined && `style reference ${o.design_style_image_strength ?? 0.82}`,
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

export interface StageDrawing {
  room: string;
  style: string;
  options: string | null;
  variation: { index: number; of: number; seed: number | null };
  /** A style reference's mean colour and strength: the result is tinted toward it. */
  reference?: { colour: [number, number, number]; strength: number };
}

/**
 * A staged room: the input resized to the provider's base size, warmed, with simple "furniture" in its lower third,
 * then enlarged by the call's whole `scale` (drawing at the base size keeps the emulator's work small at 2304 px).
 */
export function stage(input: Raster, width: number, height: number, d: StageDrawing, scale = 1): Raster {
  const base = resize(input, Math.round(width / scale), Math.round(height / scale));
  const img = scene(base, d);
  banners(img, stageLines(d));
  // Enlarged smoothly, banners and all: a pixel-for-pixel enlargement's staircase edges, and thin banner text drawn
  // at full size, look to the structure check like lines that moved (measured on its labelled set's photos).
  return scale > 1 ? resize(img, width, height) : img;
}

function scene(img: Raster, d: StageDrawing): Raster {
  const { width, height } = img;
  const tint = d.reference;
  mapPixels(img, (r, g, b) => {
    const [wr, wg, wb] = [r * 0.95 + 18, g * 0.93 + 10, b * 0.85];
    if (!tint) return [wr, wg, wb];
    const k = 0.35 * tint.strength;
    return [wr * (1 - k) + tint.colour[0] * k, wg * (1 - k) + tint.colour[1] * k, wb * (1 - k) + tint.colour[2] * k];
  });
  const sofa = VARIATION_SOFAS[d.variation.index % VARIATION_SOFAS.length]!;
  piece(img, width * 0.12, height * 0.62, width * 0.46, height * 0.16, sofa, 1); // sofa
  piece(img, width * 0.12, height * 0.54, width * 0.46, height * 0.09, [sofa[0] + 18, sofa[1] + 19, sofa[2] + 20], 2);
  piece(img, width * 0.64, height * 0.7, width * 0.2, height * 0.05, [150, 111, 74], 3); // table
  piece(img, width * 0.1, height * 0.8, width * 0.8, height * 0.06, [196, 168, 130], 4); // rug
  return img;
}

/**
 * A piece of emulated furniture: woven and outlined, as real upholstery and wood are. A flat block of one colour over
 * a wall's edges is what paint over a window looks like, and the structure check rightly refuses that.
 */
function piece(img: Raster, x0: number, y0: number, w: number, h: number, rgb: [number, number, number], seed: number) {
  const X0 = Math.round(x0);
  const Y0 = Math.round(y0);
  const X1 = Math.min(img.width, Math.round(x0 + w));
  const Y1 = Math.min(img.height, Math.round(y0 + h));
  let s = seed;
  const rand = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) % 1000) / 1000;
  };
  for (let y = Y0; y < Y1; y++) {
    for (let x = X0; x < X1; x++) {
      const outline = x - X0 < 3 || X1 - x <= 3 || y - Y0 < 3 || Y1 - y <= 3;
      const weave = (((y - Y0) >> 2) % 2 === 0 ? 18 : -18) + (((x - X0) >> 3) % 2 === 0 ? 10 : -10);
      const n = (rand() - 0.5) * 40;
      const o = (y * img.width + x) * 4;
      for (let c = 0; c < 3; c++) {
        const v = outline ? rgb[c]! * 0.45 : rgb[c]! + weave + n;
        img.data[o + c] = Math.max(0, Math.min(255, Math.round(v)));
      }
    }
  }
}

function stageLines(d: StageDrawing): string[] {
  const lines = ["EMULATED STAGING - NOT AI", `${d.room} / ${d.style}`];
  if (d.options) lines.push(d.options.toUpperCase());
  if (d.reference) lines.push("STYLE REFERENCE RECEIVED");
  if (d.variation.of > 1 || d.variation.seed !== null) {
    const seed = d.variation.seed === null ? "" : ` SEED ${d.variation.seed}`;
    lines.push(`VARIATION ${d.variation.index + 1}/${d.variation.of}${seed}`);
  }
  return lines;
}

/** Each pixel repeated `k` times across and down. */
function enlarge(img: Raster, k: number): Raster {
  const width = img.width * k;
  const data = new Uint8Array(width * img.height * k * 4);
  const bytes = img.data.byteOffset % 4 === 0 ? img.data : img.data.slice();
  const src = new Uint32Array(bytes.buffer, bytes.byteOffset, img.width * img.height);
  const dst = new Uint32Array(data.buffer);
  for (let y = 0; y < img.height; y++) {
    const row = y * k * width;
    for (let x = 0; x < img.width; x++) dst.fill(src[y * img.width + x]!, row + x * k, row + x * k + k);
    for (let r = 1; r < k; r++) dst.copyWithin(row + r * width, row, row + width);
  }
  return { width, height: img.height * k, data };
}

/** The legacy call without a photo: the provider invents an "inspirational" room. */
export function inventedRoom(width: number, height: number, room: string, style: string): Raster {
  const img = blank(width, height, [214, 206, 192]);
  fillRect(img, 0, height * 0.68, width, height * 0.32, [150, 120, 90]); // floor
  fillRect(img, width * 0.62, height * 0.18, width * 0.22, height * 0.34, [180, 210, 235]); // window
  fillRect(img, width * 0.14, height * 0.56, width * 0.4, height * 0.16, [92, 107, 138]); // sofa
  banners(img, ["EMULATED: NO PHOTO SENT - INVENTED ROOM", `${room} / ${style}`]);
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

/**
 * A replaced sky: per column, the bright smooth run from the top down to the first edge (the sky of an exterior
 * photo; none in a room) becomes a gradient; everything is relit for the hour.
 */
export function sky(input: Raster, width: number, height: number, skyType: string): Raster {
  const img = resize(input, width, height);
  const [top, bottom] = SKIES[skyType] ?? SKIES.day!;
  const skyline = skylineOf(img);
  mapPixels(img, (r, g, b, x, y) => {
    const line = skyline[x]!;
    if (y >= line)
      return skyType === "night"
        ? [r * 0.55, g * 0.6, b * 0.75]
        : skyType === "dusk"
          ? [r * 0.9 + 12, g * 0.8, b * 0.8]
          : [r, g, b];
    const t = y / Math.max(1, line);
    const star = skyType === "night" && (x * 7919 + y * 104729) % 997 === 0 ? 200 : 0;
    return [
      top[0] + (bottom[0] - top[0]) * t + star,
      top[1] + (bottom[1] - top[1]) * t + star,
      top[2] + (bottom[2] - top[2]) * t + star,
    ];
  });
  banners(img, [`EMULATED SKY: ${skyType} - NOT AI`], "bottom");
  return img;
}

/** Per column, the first row below the sky (0: no sky in that column). */
function skylineOf(img: Raster): Int32Array {
  const { width: w, height: h, data } = img;
  const lum = (x: number, y: number) => {
    const o = (y * w + x) * 4;
    return 0.299 * data[o]! + 0.587 * data[o + 1]! + 0.114 * data[o + 2]!;
  };
  let mean = 0;
  for (let i = 0; i < w * h; i += 7) mean += lum(i % w, Math.floor(i / w));
  mean /= Math.ceil((w * h) / 7);
  const out = new Int32Array(w);
  for (let x = 0; x < w; x++) {
    if (lum(x, 0) < Math.max(mean, 90)) continue;
    let y = 1;
    while (y < h && Math.abs(lum(x, y) - lum(x, y - 1)) < 10) y++;
    out[x] = y;
  }
  return out;
}

/**
 * An emptied room: the floor (the lowest 36%, where furniture stands) softened and lightened as if it were cleared,
 * or, with a mask (white = remove), only where the mask is white.
 */
export function removal(input: Raster, width: number, height: number, mask: Raster | null): Raster {
  const img = resize(input, width, height);
  const m = mask ? resize(mask, width, height) : null;
  mapPixels(img, (r, g, b, x, y) => {
    const inside = m ? m.data[(y * width + x) * 4]! > 127 : y >= height * 0.64;
    if (!inside) return [r, g, b];
    const avg = (r + g + b) / 3;
    return [avg * 0.4 + 140, avg * 0.4 + 134, avg * 0.4 + 124];
  });
  banners(img, [mask ? "EMULATED MASKED REMOVAL - NOT AI" : "EMULATED FURNITURE REMOVAL - NOT AI"]);
  return img;
}

/** An enlarged copy, labelled so nobody takes it for the provider's upscaler. */
export function upscale(input: Raster, factor: number): Raster {
  const img = enlarge(input, factor);
  banners(img, [`EMULATED UPSCALE X${factor} - NOT AI`], "bottom");
  return img;
}

export { meanColour };

/**
 * The emulator's label: one band of one height relative to the image (about 4 %) along the bottom edge (or the
 * top), its lines joined on one row. The results must pass the structure check, including results made from an
 * earlier emulated result (a sky over a staged room, a staging of an emptied room): a new band lying exactly over
 * the old one keeps the old band's edge where it was, where a taller or stacked band would bury it, and the check
 * rightly calls a buried line a changed room. A band over the ceiling line would hide the room's top edge from it.
 */
const BAND = 0.04;
function banners(img: Raster, lines: string[], at: "top" | "bottom" = "bottom"): void {
  const scale = Math.max(1, Math.round((BAND * img.height) / 11));
  const y = at === "top" ? 0 : img.height - 11 * scale;
  drawBanner(img, lines.join(" | "), y, scale);
}

/**
 * The emulator's "drift" mode (issue 33): what a provider that changes the architecture does. A block of the upper
 * middle (where a window usually is) is moved a quarter of the width to the left, its old place filled with the
 * wall's colour beside it, and the upper half of the room (the ceiling line) is shifted down by 6% of the height.
 */
export function drift(img: Raster): Raster {
  const { width: w, height: h, data } = img;
  const at = (x: number, y: number) => (y * w + x) * 4;
  const x0 = Math.round(w * 0.55);
  const x1 = Math.round(w * 0.8);
  const y0 = Math.round(h * 0.1);
  const y1 = Math.round(h * 0.45);
  const dx = Math.round(w * 0.3);
  for (let y = y0; y < y1; y++) {
    data.copyWithin(at(x0 - dx, y), at(x0, y), at(x1, y));
    // The old place takes the wall just right of it.
    const wall = data.subarray(at(Math.min(w - 1, x1 + 4), y), at(Math.min(w - 1, x1 + 4), y) + 4);
    for (let x = Math.max(x0, x1 - dx); x < x1; x++) data.set(wall, at(x, y));
  }
  const dy = Math.round(h * 0.06);
  const half = Math.round(h * 0.5);
  data.copyWithin(at(0, dy), at(0, 0), at(0, half - dy));
  return img;
}
