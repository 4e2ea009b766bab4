// PNG decoding with the runtime's zlib (DecompressionStream) and the row filters here: what fast-png does, without
// its JavaScript inflate, which was most of fast-png's time (bench/pixels.ts), and, for pngRows, without ever holding
// the whole image: a removal mask is the size of its photo, and a whole one inflated and decoded would not fit in a
// Worker's memory (docs/decisions/0211-masks-decoded-once-per-photo.md). Interlaced PNGs are not read here.

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Samples per pixel by PNG colour type: gray, RGB, palette, gray + alpha, RGBA. */
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** The bit depths the PNG standard allows for each colour type. */
const PNG_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

export interface PngHeader {
  width: number;
  height: number;
  /** Bits per sample. */
  depth: number;
  colorType: number;
  /** Samples per pixel. */
  channels: number;
  interlaced: boolean;
}

export interface PngParts {
  header: PngHeader;
  palette: Uint8Array | null;
  /** The image data chunks, in order (one zlib stream across them). */
  idat: Uint8Array[];
}

/**
 * The PNG's header and data chunks, checked for shape: the signature, IHDR first with a valid colour type and depth,
 * every chunk inside the file, at least one IDAT, IEND last with nothing after it. Null when any of that fails.
 * Chunk CRCs are not checked: the zlib stream carries its own checksum, and pixels are what matter here.
 */
export function pngParts(png: Uint8Array): PngParts | null {
  if (png.length < 8 + 25 + 12 || PNG_SIGNATURE.some((b, i) => png[i] !== b)) return null;
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let header: PngHeader | null = null;
  let palette: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  for (let at = 8; ; ) {
    if (at + 12 > png.length) return null;
    const length = view.getUint32(at);
    if (length > png.length - at - 12) return null;
    const type = String.fromCharCode(png[at + 4]!, png[at + 5]!, png[at + 6]!, png[at + 7]!);
    const data = png.subarray(at + 8, at + 8 + length);
    if (!header) {
      if (type !== "IHDR" || length !== 13) return null;
      const colorType = data[9]!;
      const depth = data[8]!;
      const width = view.getUint32(at + 8);
      const height = view.getUint32(at + 12);
      if (!PNG_DEPTHS[colorType]?.includes(depth) || width === 0 || height === 0) return null;
      if (data[10] !== 0 || data[11] !== 0 || data[12]! > 1) return null;
      header = { width, height, depth, colorType, channels: PNG_CHANNELS[colorType]!, interlaced: data[12] === 1 };
    } else if (type === "PLTE") palette = data;
    else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") return at + 12 === png.length && idat.length > 0 ? { header, palette, idat } : null;
    at += 12 + length;
  }
}

/** Bytes per pixel for the filters (at least 1) and bytes per row, without the filter byte. */
export function rowShape(h: PngHeader): { bpp: number; stride: number } {
  return { bpp: Math.max(1, (h.channels * h.depth) / 8), stride: Math.ceil((h.width * h.channels * h.depth) / 8) };
}

/**
 * Undoes one row's filter: `src` from `at` holds the row's filtered bytes (after its filter byte), `prev` the row
 * above unfiltered (zeros for the first). Writes `cur`; false for a filter type PNG does not have.
 */
export function unfilterRow(
  filter: number,
  src: Uint8Array,
  at: number,
  cur: Uint8Array,
  prev: Uint8Array,
  bpp: number,
): boolean {
  const n = cur.length;
  // One loop per filter type, none branching per byte: twice as fast as one loop switching on the type per byte.
  if (filter === 0) cur.set(src.subarray(at, at + n));
  else if (filter === 1) {
    for (let i = 0; i < bpp; i++) cur[i] = src[at + i]!;
    for (let i = bpp; i < n; i++) cur[i] = src[at + i]! + cur[i - bpp]!;
  } else if (filter === 2) {
    for (let i = 0; i < n; i++) cur[i] = src[at + i]! + prev[i]!;
  } else if (filter === 3) {
    for (let i = 0; i < bpp; i++) cur[i] = src[at + i]! + (prev[i]! >> 1);
    for (let i = bpp; i < n; i++) cur[i] = src[at + i]! + ((cur[i - bpp]! + prev[i]!) >> 1);
  } else if (filter === 4) {
    for (let i = 0; i < bpp; i++) cur[i] = src[at + i]! + prev[i]!;
    for (let i = bpp; i < n; i++) {
      const a = cur[i - bpp]!;
      const b = prev[i]!;
      const c = prev[i - bpp]!;
      const pa = Math.abs(b - c);
      const pb = Math.abs(a - c);
      const pc = Math.abs(a + b - 2 * c);
      cur[i] = src[at + i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
    }
  } else return false;
  return true;
}

/** The image data inflated whole, by the runtime's zlib: for small images (the analysis PNGs). */
export async function inflateAll(parts: PngParts): Promise<Uint8Array> {
  const stream = new Blob(parts.idat as Uint8Array<ArrayBuffer>[]).stream();
  return new Uint8Array(await new Response(stream.pipeThrough(new DecompressionStream("deflate"))).arrayBuffer());
}

/**
 * Compressed bytes handed to the inflater at a time. The runtime inflates a whole input chunk at once whatever the
 * reader asks: deflate expands at most about 1,032 times, so 4 KB in is at most about 4 MB out, where the whole
 * IDAT of a 100 KB mask could be 96 MB.
 */
const INFLATE_SLICE = 4096;

/** The chunks' bytes as a stream of slices of at most `size` bytes, each made when the reader wants it. */
function slices(chunks: Uint8Array[], size: number): ReadableStream<Uint8Array<ArrayBuffer>> {
  let chunk = 0;
  let at = 0;
  return new ReadableStream<Uint8Array<ArrayBuffer>>(
    {
      pull(controller) {
        while (chunk < chunks.length && at >= chunks[chunk]!.length) {
          chunk++;
          at = 0;
        }
        if (chunk >= chunks.length) return controller.close();
        const piece = chunks[chunk]!.subarray(at, at + size);
        at += piece.length;
        controller.enqueue(piece.slice());
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The rows of a non-interlaced PNG, unfiltered, as the zlib stream inflates: the row handed out is overwritten by the
 * next, and nothing else of the image is held. Throws when the data is not a whole zlib stream (its checksum
 * included), a row has an unknown filter, or there are fewer or more bytes than the rows need (so a small file that
 * inflates to gigabytes stops at the first byte past its last row).
 */
export async function* pngRows(parts: PngParts): AsyncGenerator<Uint8Array, void, undefined> {
  const { header } = parts;
  if (header.interlaced) throw new Error("Interlaced PNGs are not read here.");
  const { bpp, stride } = rowShape(header);
  const reader = slices(parts.idat, INFLATE_SLICE).pipeThrough(new DecompressionStream("deflate")).getReader();
  const row = new Uint8Array(stride + 1);
  let prev = new Uint8Array(stride);
  let cur = new Uint8Array(stride);
  let filled = 0;
  let y = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (let at = 0; at < value.length; ) {
        if (y >= header.height) throw new Error("The PNG has data past its last row.");
        // A whole row in this chunk is unfiltered where it lies; one split across chunks is gathered first.
        let src: Uint8Array = row;
        let from = 1;
        if (filled === 0 && value.length - at >= stride + 1) {
          src = value;
          from = at + 1;
          at += stride + 1;
        } else {
          const n = Math.min(stride + 1 - filled, value.length - at);
          row.set(value.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled < stride + 1) continue;
          filled = 0;
        }
        const filter = src[from - 1]!;
        if (!unfilterRow(filter, src, from, cur, prev, bpp)) throw new Error(`Unknown PNG filter ${filter}.`);
        yield cur;
        [prev, cur] = [cur, prev];
        y++;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  if (y < header.height || filled > 0) throw new Error("The PNG's image data is cut short.");
}

export type GrayPngCheck = { width: number; height: number } | "damaged" | "not-gray";

/**
 * Decodes the whole PNG, row by row, and checks it is one channel of gray: a grayscale PNG (any depth), or gray +
 * alpha, RGB or RGBA whose every pixel has equal red, green and blue and full alpha (a browser's canvas writes RGBA).
 * "damaged" when it does not decode whole; "not-gray" for a colour pixel, a transparent one, a palette or interlacing.
 */
export async function checkGrayPng(png: Uint8Array): Promise<GrayPngCheck> {
  const parts = pngParts(png);
  if (!parts) return "damaged";
  const { header } = parts;
  if (header.colorType === 3 || header.interlaced) return "not-gray";
  const gray = grayTest(header);
  try {
    for await (const row of pngRows(parts)) if (gray && !gray(row)) return "not-gray";
  } catch {
    return "damaged";
  }
  return { width: header.width, height: header.height };
}

/** A test that a row's pixels are gray and opaque, for the colour types that could be anything else; null for gray. */
function grayTest(h: PngHeader): ((row: Uint8Array) => boolean) | null {
  const { colorType, depth } = h;
  if (colorType === 0) return null;
  if (depth === 8 && colorType === 6) {
    return (r) => {
      for (let s = 0; s < r.length; s += 4)
        if (r[s] !== r[s + 1] || r[s] !== r[s + 2] || r[s + 3] !== 255) return false;
      return true;
    };
  }
  if (depth === 8 && colorType === 2) {
    return (r) => {
      for (let s = 0; s < r.length; s += 3) if (r[s] !== r[s + 1] || r[s] !== r[s + 2]) return false;
      return true;
    };
  }
  // Gray + alpha at 8 bits, and every 16-bit form: sample by sample.
  const bytes = depth / 8;
  const alpha = colorType === 4 || colorType === 6;
  const colour = colorType === 2 || colorType === 6;
  const pixel = h.channels * bytes;
  return (r) => {
    for (let s = 0; s < r.length; s += pixel) {
      for (let k = 0; k < bytes; k++) {
        if (colour && (r[s + k] !== r[s + bytes + k] || r[s + k] !== r[s + 2 * bytes + k])) return false;
        if (alpha && r[s + pixel - bytes + k] !== 0xff) return false;
      }
    }
    return true;
  };
}
