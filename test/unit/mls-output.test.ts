import { env } from "cloudflare:workers";
import { makeJpeg } from "@test/fixtures/images";
import { describeImage } from "@workers/lib/image-facts";
import { imagesFor } from "@workers/lib/images";
import { drawable, type LabelSpec, labelOverlayPng } from "@workers/lib/label/render";
import { crc32Update, type ZipEntry, zipStream } from "@workers/lib/zip-stream";
import { manifestCsv, safeFileName } from "@workers/services/mls/pack";
import { unzipSync } from "fflate";
import jpeg from "jpeg-js";
import jsQR from "jsqr";
import { describe, expect, it } from "vitest";

// The disclosure label (pixels, QR) and the streamed ZIP writer
// (docs/decisions/0110-mls-disclosure-and-original-pages.md, 0111-listing-packs-and-streamed-zips.md).

const URL_ = "http://localhost:5173/o/abcdefghijklmnopqrstuvwxyz";

function rgba(bytes: Uint8Array) {
  return jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
}

/**
 * The label burned in as labelledBytes does it: laid out for the photo's size from its header, drawn as a PNG, and
 * drawn onto the photo by the Images adapter (here the local images emulator, as the stand-in cannot draw).
 */
async function renderLabelled(src: Uint8Array, spec: LabelSpec): Promise<{ bytes: Uint8Array; type: string }> {
  const { width, height, contentType } = describeImage(src);
  const overlay = await labelOverlayPng(width, height, spec);
  const bytes = await imagesFor(env).burnOverlay(src, overlay.png, { left: overlay.left, top: overlay.top });
  return { bytes, type: contentType };
}

describe("disclosure label", () => {
  it("burns the text and a QR of the original page into the corner; the QR decodes to the link", async () => {
    const src = makeJpeg(640, 480, 90, 0);
    const out = await renderLabelled(src, {
      lines: ["Virtually Staged"],
      corner: "bottom-right",
      size: "medium",
      tone: "dark",
      qrUrl: URL_,
    });
    expect(out.type).toBe("image/jpeg");
    const img = rgba(out.bytes);
    expect([img.width, img.height]).toEqual([640, 480]);
    const code = jsQR(new Uint8ClampedArray(img.data), img.width, img.height);
    expect(code?.data).toBe(URL_);
    // The QR sits bottom right: its position is in the right half, lower half.
    expect(code!.location.topLeftCorner.x).toBeGreaterThan(320);
    expect(code!.location.topLeftCorner.y).toBeGreaterThan(240);
    // The top-left corner is untouched (same pixels as the source, within JPEG noise).
    const before = rgba(src);
    const i = (10 * 640 + 10) * 4;
    expect(Math.abs((img.data[i] ?? 0) - (before.data[i] ?? 0))).toBeLessThan(12);
  });

  it("is deterministic: the same input and options give the same overlay and the same bytes", async () => {
    const src = makeJpeg(400, 300);
    const spec = { lines: ["Staged"], corner: "top-left", size: "small", tone: "light", qrUrl: null } as const;
    expect(await labelOverlayPng(400, 300, spec)).toEqual(await labelOverlayPng(400, 300, spec));
    expect((await renderLabelled(src, spec)).bytes).toEqual((await renderLabelled(src, spec)).bytes);
  });

  it("draws in the corner asked for, light or dark", async () => {
    const src = makeJpeg(800, 600, 90, 0);
    const dark = rgba(
      (
        await renderLabelled(src, {
          lines: ["Virtually Staged"],
          corner: "top-left",
          size: "large",
          tone: "dark",
          qrUrl: null,
        })
      ).bytes,
    );
    const light = rgba(
      (
        await renderLabelled(src, {
          lines: ["Virtually Staged"],
          corner: "top-left",
          size: "large",
          tone: "light",
          qrUrl: null,
        })
      ).bytes,
    );
    const before = rgba(src);
    // Inside the box near its left edge (before the text): dark box darker, light box lighter than the photo.
    const i = (30 * 800 + 22) * 4 + 2; // blue: 150 in the source
    expect(dark.data[i]!).toBeLessThan(before.data[i]! - 60);
    expect(light.data[i]!).toBeGreaterThan(before.data[i]! + 60);
    // Bottom right untouched.
    const j = (590 * 800 + 790) * 4;
    expect(Math.abs(dark.data[j]! - before.data[j]!)).toBeLessThan(12);
  });

  it("draws every line: the statement, then where the original is, in a box as tall as both", async () => {
    const src = makeJpeg(800, 600, 90, 0);
    const spec = { corner: "top-left", size: "large", tone: "dark", qrUrl: null } as const;
    const one = rgba((await renderLabelled(src, { ...spec, lines: ["Virtually staged"] })).bytes);
    const two = rgba(
      (await renderLabelled(src, { ...spec, lines: ["Virtually staged", "Unaltered original: example.com/o/abc"] }))
        .bytes,
    );
    const before = rgba(src);
    // Below a one-line box (12 + 68 px) but inside a two-line one (12 + 115 px), in its left padding.
    const i = (100 * 800 + 20) * 4 + 2;
    expect(Math.abs(one.data[i]! - before.data[i]!)).toBeLessThan(12);
    expect(two.data[i]!).toBeLessThan(before.data[i]! - 60);
  });

  it("knows which characters its font draws", () => {
    expect(drawable("Virtually Staged – 2")).toBe(false);
    expect(drawable("Virtuellement meublé")).toBe(true);
    expect(drawable("bad\u0007")).toBe(false);
  });
});

function slowStream(bytes: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= bytes) return controller.close();
        const n = Math.min(chunk, bytes - sent);
        const b = new Uint8Array(n);
        b.fill(sent / chunk);
        sent += n;
        controller.enqueue(b);
      },
    },
    { highWaterMark: 0 },
  );
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const p of stream as unknown as AsyncIterable<Uint8Array>) {
    parts.push(p);
    n += p.byteLength;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

describe("streamed ZIP", () => {
  it("writes a valid store-only archive with CRCs that a standard reader accepts", async () => {
    const enc = new TextEncoder();
    const entries: ZipEntry[] = [
      { name: "manifest.json", modifiedAt: Date.UTC(2026, 0, 2), open: async () => enc.encode('{"a":1}') },
      { name: "originals/01 été.jpg", modifiedAt: Date.UTC(2026, 0, 2), open: async () => slowStream(200_000, 7000) },
      { name: "empty.txt", modifiedAt: Date.UTC(2026, 0, 2), open: async () => new Uint8Array(0) },
    ];
    const zip = await collect(zipStream(entries).stream);
    const files = unzipSync(zip);
    expect(Object.keys(files).sort()).toEqual(["empty.txt", "manifest.json", "originals/01 été.jpg"]);
    expect(new TextDecoder().decode(files["manifest.json"])).toBe('{"a":1}');
    expect(files["originals/01 été.jpg"]?.byteLength).toBe(200_000);
    expect(crc32Update(0, enc.encode("123456789"))).toBe(0xcbf43926);
  });

  it("streams a pack of 40 photos of 3 MB each holding under 1 MB at any time", async () => {
    const MB = 1024 * 1024;
    function* entries(): Generator<ZipEntry> {
      for (let i = 0; i < 40; i++) {
        yield { name: `originals/${i}.jpg`, modifiedAt: 0, open: async () => slowStream(3 * MB) };
      }
    }
    const zip = zipStream(entries());
    const reader = zip.stream.getReader();
    let total = 0;
    let entriesSeen = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (value.byteLength === 16 && value[0] === 0x50 && value[1] === 0x4b && value[2] === 7) entriesSeen++;
    }
    expect(entriesSeen).toBe(40);
    expect(total).toBeGreaterThan(40 * 3 * MB);
    expect(zip.written()).toBe(total);
    expect(zip.peakBuffered()).toBeLessThan(1 * MB);
    expect(zip.peakBuffered()).toBeGreaterThanOrEqual(64 * 1024);
  }, 120_000);
});

describe("pack manifest", () => {
  it("neutralises spreadsheet formulas and unsafe file names", () => {
    const csv = manifestCsv([
      {
        photo: '=HYPERLINK("x")',
        file: "photos/01 a.jpg",
        kind: "unaltered",
        done: null,
        caption: null,
        originalFile: "photos/01 a.jpg",
        originalPage: null,
        labelText: null,
        qr: null,
        roomType: null,
        style: null,
        sky: null,
        alteredAt: null,
        leftOut: null,
      },
    ]);
    expect(csv.split("\r\n")[1]).toMatch(/^"'=HYPERLINK\(""x""\)"/);
    expect(safeFileName("../../etc/passwd.jpg")).toBe("_.._etc_passwd");
    expect(safeFileName("\u0000")).toBe("_");
  });
});
