import jpeg from "jpeg-js";
import { describe, expect, it } from "vitest";
import { GPS_MARKER, makeJpeg, makePng, pngWithExif, withExif } from "../fixtures/images.ts";
import { baseUrl, browserForFile, createUser, type FixtureUser, signedInContext } from "./browser.ts";
import { measureUploadBytes, phoneSizedJpeg } from "./support/library-bytes.ts";
import { qualityScore } from "./support/photo-quality.ts";

// What the browser's downscaler sends (docs/decisions/0131-fewer-bytes-per-photo.md):
// a 10 MB phone photo leaves as at most 1.5 MiB at a 2560 px long edge, stood
// the right way up by its EXIF orientation, with no EXIF or GPS left in it.

const b = browserForFile();

/** The bytes the server stored for the user's newest photo. */
async function newestOriginal(user: FixtureUser): Promise<Uint8Array> {
  const headers = { Cookie: `sw_session=${user.sessionToken}` };
  const list = (await (await fetch(`${baseUrl()}/api/photos`, { headers })).json()) as { photos: { id: string }[] };
  const id = list.photos[0]?.id;
  if (!id) throw new Error("no photo stored");
  const res = await fetch(`${baseUrl()}/api/photos/${id}/original`, { headers });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

async function upload(user: FixtureUser, file: { name: string; mimeType: string; buffer: Buffer }) {
  const ctx = await signedInContext(b, user);
  const page = await b.newPage(ctx);
  await page.goto("/dashboard?upload=1");
  await page.waitForSelector("html[data-hydrated=true]");
  await page.getByTestId("upload-input").setInputFiles(file);
  await page.waitForSelector("[data-testid=upload-panel][data-state=success]", { timeout: 60_000 });
  page.assertClean();
  await ctx.close();
}

function contains(haystack: Uint8Array, needle: string): boolean {
  return Buffer.from(haystack).includes(Buffer.from(needle, "latin1"));
}

describe("the photo the browser sends", () => {
  it("sends a 10 MB phone photo as at most 1.5 MiB with a 2560 px long edge and a quality score beside it", async () => {
    const user = await createUser({ credits: 1 });
    const file = phoneSizedJpeg();
    expect(file.byteLength).toBeGreaterThan(9 * 1024 * 1024);
    const sent = await measureUploadBytes(
      b.browser,
      { baseUrl: baseUrl(), sessionToken: user.sessionToken! },
      {
        name: "Phone photo.jpg",
        mimeType: "image/jpeg",
        buffer: Buffer.from(file),
      },
    );
    expect(sent.sentTotalBytes).toBeLessThanOrEqual(1.5 * 1024 * 1024);
    const stored = await newestOriginal(user);
    const { width, height } = jpeg.decode(stored, { useTArray: true, maxMemoryUsageInMB: 512 });
    expect(Math.max(width, height)).toBe(2560);
    expect({ width, height }).toEqual({ width: 2560, height: 1920 });
    // Against the full-size photo scaled to the same size: what the encoder lost.
    const score = qualityScore(file, stored);
    console.log(`10 MB phone photo: sent ${sent.sentTotalBytes} bytes, SSIM ${score.toFixed(4)}`);
    expect(score).toBeGreaterThan(0.8);
  });

  it("stands a JPEG up by its EXIF orientation and sends no EXIF or GPS position", async () => {
    const user = await createUser({ credits: 1 });
    // 600 x 300 as stored, orientation 6 (rotate 90° clockwise): a portrait photo, as the camera meant it.
    const file = withExif(makeJpeg(600, 300, 90, 10, 4), 6);
    expect(contains(file, GPS_MARKER)).toBe(true);
    await upload(user, { name: "Hallway.jpg", mimeType: "image/jpeg", buffer: Buffer.from(file) });
    const stored = await newestOriginal(user);
    const { width, height } = jpeg.decode(stored, { useTArray: true });
    expect({ width, height }).toEqual({ width: 300, height: 600 });
    expect(contains(stored, GPS_MARKER)).toBe(false);
    expect(contains(stored, "Exif\0\0")).toBe(false);
  });

  it("sends a small PNG re-encoded, without its eXIf chunk and GPS position", async () => {
    const user = await createUser({ credits: 1 });
    const file = pngWithExif(makePng(300, 200), 1);
    expect(contains(file, GPS_MARKER)).toBe(true);
    await upload(user, { name: "Plan.png", mimeType: "image/png", buffer: Buffer.from(file) });
    const stored = await newestOriginal(user);
    expect([...stored.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    expect(contains(stored, GPS_MARKER)).toBe(false);
    expect(contains(stored, "eXIf")).toBe(false);
  });
});
