// Reduction to the analysis size and the small image operations the structure check is made of
// (docs/decisions/0160-structure-check.md). Pure TypeScript: no Node, no DOM; relative imports only, so the bench can
// load it in Node.

/** A gray image at any size, one byte a pixel, row-major. */
export interface Gray {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A float image at the analysis size. */
export interface Plane {
  width: number;
  height: number;
  data: Float32Array;
}

/** The long edge every comparison happens at (ADR 0160: the smallest size at which a 5 % line shift is 10 px). */
export const ANALYSIS_LONG_EDGE = 320;

/** The analysis size for a picture of `width` x `height`: its long edge at ANALYSIS_LONG_EDGE, its aspect kept. */
export function analysisSize(width: number, height: number): { width: number; height: number } {
  const f = ANALYSIS_LONG_EDGE / Math.max(width, height);
  return { width: Math.max(8, Math.round(width * f)), height: Math.max(8, Math.round(height * f)) };
}

/** Most samples a reduced pixel averages along each axis: 3 x 3 points spread over the area it covers. */
const SAMPLES = 3;

/**
 * Reduces decoded pixels (gray, RGB or RGBA, as many bytes a pixel as `data.length / (width * height)` says) to a gray
 * image of `size` (default: the analysis size of the picture itself). Each output pixel is the mean luminance of up to
 * 3 x 3 points spread evenly over the area it covers, so the cost is fixed by the output size, not the input's (the
 * check blurs what it compares, so 9 of a 2304 px picture's 50 or so pixels a cell are enough).
 */
export function toAnalysis(
  data: Uint8Array | Uint8ClampedArray,
  width: number,
  height: number,
  size: { width: number; height: number } = analysisSize(width, height),
): Gray {
  const channels = Math.round(data.length / (width * height));
  if (![1, 3, 4].includes(channels) || channels * width * height !== data.length) {
    throw new Error(`toAnalysis: ${data.length} bytes are not a ${width}x${height} gray, RGB or RGBA image`);
  }
  const { width: w, height: h } = size;
  const out = new Uint8Array(w * h);
  const xs = samplePoints(width, w);
  const ys = samplePoints(height, h);
  const nx = xs.length / w;
  const ny = ys.length / h;
  const count = nx * ny;
  // RGBA in whole pixels: one 32-bit read a sample (little-endian: red in the low byte), when the bytes are aligned.
  if (channels === 4 && data.byteOffset % 4 === 0) {
    const px = new Uint32Array(data.buffer, data.byteOffset, width * height);
    for (let oy = 0; oy < h; oy++) {
      for (let ox = 0; ox < w; ox++) {
        let sum = 0;
        for (let j = 0; j < ny; j++) {
          const row = ys[oy * ny + j]! * width;
          for (let i = 0; i < nx; i++) {
            const v = px[row + xs[ox * nx + i]!]!;
            sum += (77 * (v & 255) + 150 * ((v >>> 8) & 255) + 29 * ((v >>> 16) & 255)) >> 8;
          }
        }
        out[oy * w + ox] = Math.round(sum / count);
      }
    }
    return { width: w, height: h, data: out };
  }
  // Byte offsets of the sampled columns, so the inner loop only adds.
  const cols = Int32Array.from(xs, (x) => x * channels);
  const stride = width * channels;
  for (let oy = 0; oy < h; oy++) {
    for (let ox = 0; ox < w; ox++) {
      let sum = 0;
      for (let j = 0; j < ny; j++) {
        const row = ys[oy * ny + j]! * stride;
        for (let i = 0; i < nx; i++) {
          const o = row + cols[ox * nx + i]!;
          // Rec. 601 luma in integers (gray input: the byte itself).
          sum += channels === 1 ? data[o]! : (77 * data[o]! + 150 * data[o + 1]! + 29 * data[o + 2]!) >> 8;
        }
      }
      out[oy * w + ox] = Math.round(sum / count);
    }
  }
  return { width: w, height: h, data: out };
}

/** For each of `n` output cells along an axis of `length`, the same number of sample positions spread over it. */
function samplePoints(length: number, n: number): Int32Array {
  const cell = length / n;
  const k = Math.max(1, Math.min(SAMPLES, Math.floor(cell)));
  const out = new Int32Array(n * k);
  for (let c = 0; c < n; c++) {
    for (let i = 0; i < k; i++) {
      out[c * k + i] = Math.min(length - 1, Math.floor(c * cell + ((i + 0.5) * cell) / k));
    }
  }
  return out;
}

/**
 * A gray image resized to `size` by exact area averaging on each axis (bilinear where an axis grows): for a gray that
 * is already near the analysis size, where toAnalysis's sparse samples would alias.
 */
export function resizeGray(g: Gray, size: { width: number; height: number }): Gray {
  const across = axisTaps(g.width, size.width);
  const down = axisTaps(g.height, size.height);
  // Rows first: each source row to the output's width; then each output column down to the output's height.
  const rows = new Float32Array(size.width * g.height);
  for (let y = 0; y < g.height; y++) {
    const src = y * g.width;
    const dst = y * size.width;
    for (let i = 0; i < size.width; i++) {
      let v = 0;
      for (let t = across.start[i]!; t < across.start[i + 1]!; t++)
        v += g.data[src + across.index[t]!]! * across.weight[t]!;
      rows[dst + i] = v;
    }
  }
  const out = new Uint8Array(size.width * size.height);
  const col = new Float32Array(size.width);
  for (let j = 0; j < size.height; j++) {
    col.fill(0);
    for (let t = down.start[j]!; t < down.start[j + 1]!; t++) {
      const from = down.index[t]! * size.width;
      const wt = down.weight[t]!;
      for (let x = 0; x < size.width; x++) col[x]! += rows[from + x]! * wt;
    }
    for (let x = 0; x < size.width; x++) out[j * size.width + x] = Math.round(col[x]!);
  }
  return { width: size.width, height: size.height, data: out };
}

/**
 * Taps of an exact area average along one axis of `from` pixels down to `n` (bilinear where the axis grows): for
 * output i, source indexes index[start[i]..start[i+1]) with their weights.
 */
function axisTaps(from: number, n: number): { start: Int32Array; index: Int32Array; weight: Float32Array } {
  const scale = from / n;
  const start = new Int32Array(n + 1);
  const index: number[] = [];
  const weight: number[] = [];
  for (let i = 0; i < n; i++) {
    start[i] = index.length;
    const a = i * scale;
    const b = a + scale;
    if (scale > 1) {
      for (let k = Math.floor(a); k < Math.ceil(b); k++) {
        index.push(Math.min(k, from - 1));
        weight.push((Math.min(k + 1, b) - Math.max(k, a)) / scale);
      }
    } else {
      const c = Math.max(0, Math.min(from - 1, (i + 0.5) * scale - 0.5));
      const k = Math.floor(c);
      index.push(k, Math.min(k + 1, from - 1));
      weight.push(1 - (c - k), c - k);
    }
  }
  start[n] = index.length;
  return { start, index: Int32Array.from(index), weight: Float32Array.from(weight) };
}

export function toPlane(g: Gray): Plane {
  return { width: g.width, height: g.height, data: Float32Array.from(g.data) };
}

/** Separable [1 2 1]/4 blur, edges clamped. */
export function blur(p: Plane): Plane {
  const { width: w, height: h } = p;
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const r = y * w;
    for (let x = 0; x < w; x++) {
      const l = p.data[r + (x > 0 ? x - 1 : 0)]!;
      const c = p.data[r + x]!;
      const rr = p.data[r + (x < w - 1 ? x + 1 : x)]!;
      tmp[r + x] = (l + 2 * c + rr) / 4;
    }
  }
  for (let y = 0; y < h; y++) {
    const up = (y > 0 ? y - 1 : 0) * w;
    const dn = (y < h - 1 ? y + 1 : y) * w;
    const r = y * w;
    for (let x = 0; x < w; x++) out[r + x] = (tmp[up + x]! + 2 * tmp[r + x]! + tmp[dn + x]!) / 4;
  }
  return { width: w, height: h, data: out };
}

export interface Gradients {
  gx: Float32Array;
  gy: Float32Array;
  mag: Float32Array;
}

/** Sobel gradients (divided by 4, so a step of 1 gives a magnitude of 1 at most). Border pixels get 0. */
export function gradients(p: Plane): Gradients {
  const { width: w, height: h, data: d } = p;
  const gx = new Float32Array(w * h);
  const gy = new Float32Array(w * h);
  const mag = new Float32Array(w * h);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      const a = d[i - w - 1]!;
      const b = d[i - w]!;
      const c = d[i - w + 1]!;
      const e = d[i - 1]!;
      const f = d[i + 1]!;
      const g = d[i + w - 1]!;
      const hh = d[i + w]!;
      const k = d[i + w + 1]!;
      const sx = (c + 2 * f + k - a - 2 * e - g) / 4;
      const sy = (g + 2 * hh + k - a - 2 * b - c) / 4;
      gx[i] = sx;
      gy[i] = sy;
      mag[i] = Math.sqrt(sx * sx + sy * sy);
    }
  }
  return { gx, gy, mag };
}

/** The value below which `q` (0..1) of the masked values (0..400) lie, to 0.25 (a histogram, not a sort). */
export function quantile(values: Float32Array, mask: Uint8Array, q: number): number {
  const BINS = 1600;
  const hist = new Uint32Array(BINS);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    if (!mask[i]) continue;
    hist[Math.min(BINS - 1, Math.max(0, Math.floor(values[i]! * 4)))]!++;
    n++;
  }
  const want = q * n;
  let seen = 0;
  for (let b = 0; b < BINS; b++) {
    seen += hist[b]!;
    if (seen > want) return b / 4;
  }
  return (BINS - 1) / 4;
}

/** The analysis-size gray of either picture: sources at their own analysis size, results on the source's grid. */
export function reduceTo(g: Gray, size: { width: number; height: number }): Gray {
  if (g.width === size.width && g.height === size.height) return g;
  // Far larger: sparse samples are cheap and enough; near the size already: an exact resize, not to alias.
  if (g.width >= 3 * size.width && g.height >= 3 * size.height) return toAnalysis(g.data, g.width, g.height, size);
  return resizeGray(g, size);
}

/**
 * The first steps every measure takes on a pair (measures.ts, geometry.ts): both pictures on the source's analysis
 * grid, blurred once, and the result's gradients before any alignment. Made once per check and handed to each.
 */
export interface Reduced {
  size: { width: number; height: number };
  /** The source, blurred once. */
  src: Plane;
  /** The result on the source's grid, blurred once, not yet lined up. */
  res: Plane;
  gRes: Gradients;
}

export function reducePair(source: Gray, result: Gray): Reduced {
  const size = analysisSize(source.width, source.height);
  const res = blur(toPlane(reduceTo(result, size)));
  return { size, src: blur(toPlane(reduceTo(source, size))), res, gRes: gradients(res) };
}
