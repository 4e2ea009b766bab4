import { GIF_BYTES, makeJpeg, makePng } from "@test/fixtures/images";
import { contentDisposition } from "@workers/lib/content-disposition";
import { describe, expect, it } from "vitest";
import { hasCompleteEnding, readImageInfo, sniffImageType } from "~/shared/image-format";
import { sameView, viewFromSearch, viewHref } from "~/shared/library-view";
import {
  CHUNK_SIZE,
  checkChosenFile,
  chunkCount,
  chunkLength,
  fitWithin,
  MAX_UPLOAD_BYTES,
  photoNameFromFileName,
  UPLOAD_MESSAGES,
} from "~/shared/upload-rules";

describe("recognising images by their bytes", () => {
  it("knows JPEG and PNG signatures and nothing else", () => {
    expect(sniffImageType(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageType(makePng(2, 2))).toBe("image/png");
    expect(sniffImageType(GIF_BYTES)).toBeNull();
    expect(sniffImageType(new Uint8Array([0xff, 0xd8]))).toBeNull();
    expect(sniffImageType(new TextEncoder().encode("%PDF-1.7"))).toBeNull();
  });

  it("reads the pixel size of real files", () => {
    expect(readImageInfo(makeJpeg(123, 45))).toEqual({ type: "image/jpeg", width: 123, height: 45 });
    expect(readImageInfo(makePng(300, 200))).toEqual({ type: "image/png", width: 300, height: 200 });
    const noFrame = new Uint8Array([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 0, 0, 0, 0, 0, 0]);
    expect(readImageInfo(noFrame)).toBeNull();
    expect(readImageInfo(GIF_BYTES)).toBeNull();
  });

  it("tells a whole file from a cut one", () => {
    const jpeg = makeJpeg(64, 64);
    const png = makePng(64, 64);
    expect(hasCompleteEnding("image/jpeg", jpeg)).toBe(true);
    expect(hasCompleteEnding("image/jpeg", jpeg.subarray(0, jpeg.length - 100))).toBe(false);
    expect(hasCompleteEnding("image/png", png)).toBe(true);
    expect(hasCompleteEnding("image/png", png.subarray(0, png.length - 1))).toBe(false);
  });
});

describe("checking a chosen file before sending", () => {
  it("accepts JPG and PNG up to exactly 10 MB", () => {
    expect(checkChosenFile({ name: "a.jpg", type: "image/jpeg", size: MAX_UPLOAD_BYTES })).toBeNull();
    expect(checkChosenFile({ name: "a.PNG", type: "", size: 10 })).toBeNull();
    expect(checkChosenFile({ name: "a.jpeg", type: "", size: 10 })).toBeNull();
  });

  it("refuses other types, larger files and empty ones, with the message to show", () => {
    expect(checkChosenFile({ name: "a.jpg", type: "image/jpeg", size: MAX_UPLOAD_BYTES + 1 })).toBe(
      UPLOAD_MESSAGES.tooLarge,
    );
    expect(checkChosenFile({ name: "a.gif", type: "image/gif", size: 10 })).toBe(UPLOAD_MESSAGES.wrongType);
    expect(checkChosenFile({ name: "a.heic", type: "", size: 10 })).toBe(UPLOAD_MESSAGES.wrongType);
    expect(checkChosenFile({ name: "a.jpg", type: "image/jpeg", size: 0 })).toBe(UPLOAD_MESSAGES.empty);
  });

  it("names a photo after its file", () => {
    expect(photoNameFromFileName("Living room.jpg")).toBe("Living room");
    expect(photoNameFromFileName("  a\u0000b\tc.png ")).toBe("ab c");
    expect(photoNameFromFileName(".jpg")).toBe("New Image");
    expect(photoNameFromFileName("x".repeat(300))).toHaveLength(100);
  });
});

describe("chunks and sizes", () => {
  it("splits a file into equal chunks with a shorter last one", () => {
    const size = 2 * CHUNK_SIZE + 5;
    expect(chunkCount(size)).toBe(3);
    expect([0, 1, 2, 3].map((i) => chunkLength(i, size))).toEqual([CHUNK_SIZE, CHUNK_SIZE, 5, 0]);
    expect(chunkCount(CHUNK_SIZE)).toBe(1);
    expect(chunkLength(0, CHUNK_SIZE)).toBe(CHUNK_SIZE);
  });

  it("downscales to the long-edge limit and never upscales", () => {
    expect(fitWithin(4032, 3024, 3000)).toEqual({ width: 3000, height: 2250 });
    expect(fitWithin(3024, 4032, 3000)).toEqual({ width: 2250, height: 3000 });
    expect(fitWithin(1200, 800, 3000)).toEqual({ width: 1200, height: 800 });
  });
});

describe("download names", () => {
  it("quotes safely and keeps the exact name for modern browsers", () => {
    expect(contentDisposition("attachment", "Kitchen.jpg")).toBe(
      `attachment; filename="Kitchen.jpg"; filename*=UTF-8''Kitchen.jpg`,
    );
    expect(contentDisposition("attachment", 'Salle "à" manger\r\n/..\\x.jpg')).toBe(
      `attachment; filename="Salle _ manger ..x.jpg"; filename*=UTF-8''Salle%20%C3%A0%20manger%20..x.jpg`,
    );
    expect(contentDisposition("inline", "50%; off.png")).toBe(
      `inline; filename="50__ off.png"; filename*=UTF-8''50%25%3B%20off.png`,
    );
  });
});

describe("dashboard views", () => {
  it("round-trips a view through its address and ignores junk", () => {
    for (const v of [
      { kind: "all" },
      { kind: "unassigned" },
      { kind: "trash" },
      { kind: "folder", folderId: "abc123" },
    ] as const) {
      const href = viewHref(v);
      expect(sameView(viewFromSearch(new URL(href, "http://x").searchParams), v)).toBe(true);
    }
    expect(viewFromSearch(new URLSearchParams("folder=../../etc"))).toEqual({ kind: "all" });
    expect(viewHref({ kind: "trash" }, { cursor: "1-a" })).toBe("/dashboard?view=trash&cursor=1-a");
  });
});

describe("names shown in the library", () => {
  it("drop right-to-left overrides and other bidi controls from photo and folder names", async () => {
    const { photoNameFromFileName } = await import("~/shared/upload-rules");
    const { displayName } = await import("~/shared/text");
    expect(photoNameFromFileName("invoice\u202Egpj.exe.jpg")).toBe("invoicegpj.exe");
    expect(photoNameFromFileName("\u2067Living\u2069 room\u200F.png")).toBe("Living room");
    expect(displayName("Main\u202E St\u0007 listing", "Folder")).toBe("Main St listing");
    expect(displayName("\u202E\u202C", "Folder")).toBe("Folder");
  });
});
