import { pngFrom } from "@test/fixtures/images";
import { checkGrayPng, pngParts, pngRows } from "@workers/lib/png-rows";
import { decode, encode } from "fast-png";
import { describe, expect, it } from "vitest";

// The row-by-row PNG decoder (workers/lib/png-rows.ts, docs/decisions/0211-masks-decoded-once-per-photo.md): the
// rows it hands out are fast-png's, across the inflate's chunk boundaries and every filter type a real encoder picks.

/**
 * An RGB PNG of a noisy photo whose rows use each filter type in turn (0 none, 1 sub, 2 up, 3 average, 4 Paeth),
 * filtered here as an encoder does, deflated by the runtime. Its pixels, unfiltered, beside it.
 */
async function filteredPng(width: number, height: number): Promise<{ png: Uint8Array; pixels: Uint8Array }> {
  const bpp = 3;
  const stride = width * bpp;
  const pixels = new Uint8Array(stride * height);
  let seed = 7;
  for (let i = 0; i < pixels.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    pixels[i] = ((i % stride) + (seed >>> 24)) & 0xff;
  }
  const raw = new Uint8Array((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const filter = y % 5;
    raw[y * (stride + 1)] = filter;
    for (let i = 0; i < stride; i++) {
      const at = y * stride + i;
      const a = i >= bpp ? pixels[at - bpp]! : 0;
      const b = y > 0 ? pixels[at - stride]! : 0;
      const c = i >= bpp && y > 0 ? pixels[at - stride - bpp]! : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter]!;
      raw[y * (stride + 1) + 1 + i] = (pixels[at]! - predicted) & 0xff;
    }
  }
  const idat = new Uint8Array(
    await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer(),
  );
  return { png: pngFrom({ width, height, colorType: 2 }, idat), pixels };
}

describe("pngRows", () => {
  it("hands out every row unfiltered, through all five filter types and across the inflate's chunks", async () => {
    const { png, pixels } = await filteredPng(900, 600);
    // fast-png reads the same file to the same pixels: the test's encoder is right.
    expect(decode(png).data).toEqual(pixels);
    const parts = pngParts(png)!;
    expect(parts.header).toMatchObject({ width: 900, height: 600, depth: 8, channels: 3, interlaced: false });
    const stride = 900 * 3;
    let y = 0;
    for await (const row of pngRows(parts)) {
      expect(row, `row ${y}`).toEqual(pixels.subarray(y * stride, (y + 1) * stride));
      y++;
    }
    expect(y).toBe(600);
  });
});

describe("checkGrayPng", () => {
  it("reads a canvas-sized RGBA mask to its last row: gray passes, one coloured pixel at the end does not", async () => {
    const width = 1200;
    const height = 900;
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) {
      const v = (i % width) * 7 + Math.floor(i / width) < 2000 ? 255 : 0;
      data.set([v, v, v, 255], i * 4);
    }
    expect(await checkGrayPng(encode({ width, height, channels: 4, data }))).toEqual({ width, height });
    data[data.length - 3] = 1;
    expect(await checkGrayPng(encode({ width, height, channels: 4, data }))).toBe("not-gray");
  });

  it("refuses a PNG whose chunks do not add up: cut short, bytes after IEND, no IHDR first", async () => {
    const png = encode({ width: 8, height: 8, channels: 1, data: new Uint8Array(64) });
    expect(await checkGrayPng(png)).toEqual({ width: 8, height: 8 });
    expect(await checkGrayPng(png.subarray(0, png.length - 1))).toBe("damaged");
    expect(await checkGrayPng(new Uint8Array([...png, 0]))).toBe("damaged");
    const noHeader = png.slice();
    noHeader.set(new TextEncoder().encode("tEXt"), 12);
    expect(await checkGrayPng(noHeader)).toBe("damaged");
  });
});
