import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_UPLOAD_BYTES } from "../../../app/shared/catalog.ts";
import {
  claimJpeg,
  makeJpeg,
  makeMaskPng,
  makePng,
  paddedJpeg,
  paddedPng,
  pngFrom,
  solidJpeg,
} from "../../fixtures/images.ts";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import {
  expectFailureShape,
  expectRefusedWithoutChange,
  type HostileCase,
  stateDigest,
  waitForQuietState,
} from "./harness.ts";

// The limits the product states, each tried at the limit itself and one past it (issue 45, "Deliver" 2): a photo's
// bytes (10 MB) and pixels (24 megapixels, 10,000 px a side) through the public API and the resumable upload, a
// mask's bytes (2 MB) and the masks a user may store in an hour (300); and the holes of issue 45 parts 4 and 7: a
// 24-megapixel API upload, masks that only look like PNGs. The limit itself is accepted; one past is refused with
// its message and changes nothing; nothing answers 5xx (docs/decisions/0210, 0211).

// The limits as app/shared/upload-rules.ts and app/shared/masks.ts state them (the Node side cannot import those
// modules, which import others), and the starts of the messages a person reads.
const MAX_PHOTO_PIXELS = 24_000_000;
const MAX_PHOTO_EDGE = 10_000;
const MAX_MASK_BYTES = 2 * 1024 * 1024;
const TOO_MANY_PIXELS = "This photo is too large in pixels (at most 10,000 px a side and 24 megapixels).";
const TOO_LARGE = "This file is larger than 10 MB.";
const UNREADABLE = "This image could not be read.";

let alice: FixtureUser;
let aliceMasks: FixtureUser;
let maskPhoto = "";
let ran = 0;
const cookie = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });
const bearer = (u: FixtureUser) => ({ Authorization: `Bearer ${u.apiKey}` });
const PNG = { "Content-Type": "image/png" };
const masks = (photo: string) => `/api/photos/${photo}/masks`;
/** The photos seeded here are 640 x 480: a mask of their size, white over a corner. */
const FITS = makeMaskPng(640, 480, (x, y) => x < 64 && y < 48);

function photoForm(bytes: Uint8Array, name = "photo.jpg", type = "image/jpeg"): FormData {
  const fd = new FormData();
  fd.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), name);
  return fd;
}

/** Sends a request the product must accept: a 2xx with the one success shape for it, never a 5xx. */
async function expectAccepted(name: string, path: string, init: RequestInit, status: number): Promise<unknown> {
  const res = await fetch(`${baseUrl()}${path}`, { ...init, headers: { Origin: baseUrl(), ...init.headers } });
  const text = await res.text();
  expect(res.status, `${name}: ${res.status} ${text.slice(0, 200)}`).toBe(status);
  ran++;
  return JSON.parse(text);
}

/** The routes these limits hold on, as the route table lists them: a renamed route fails here, not silently. */
const LIMITED_ROUTES = [
  "POST /api/v1/photos",
  "POST /api/uploads",
  "PUT /api/uploads/:id/chunks/:index",
  "POST /api/photos/:id/masks",
];

beforeAll(async () => {
  const table = (await (await fetch(`${baseUrl()}/api/dev/routes`)).json()) as { method: string; path: string }[];
  // A parameter's pattern (`:index{[0-9]{1,5}}`) is not part of its name.
  const listed = table.map((r) => `${r.method} ${r.path}`);
  expect(LIMITED_ROUTES.filter((r) => !listed.some((l) => l === r || l.startsWith(`${r}{`)))).toEqual([]);
  alice = await createUser({ credits: 3, apiKey: true });
  aliceMasks = await createUser({ credits: 3 });
  const photo = makeJpeg(640, 480, 80, 30, 1);
  // Alice has a photo, as a real account would; the cases below do not name it.
  await seedPhotos({ baseUrl: baseUrl(), sessionToken: alice.sessionToken! }, 1, "Alice", photo);
  [maskPhoto = ""] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: aliceMasks.sessionToken! }, 1, "M", photo);
  await waitForQuietState();
}, 120_000);

afterAll(() => {
  console.log(`hostile-input suite (stated limits): ${ran} cases ran`);
});

describe("hostile input: the stated limits, at the limit and one past it", () => {
  it("a photo's pixels through POST /api/v1/photos: 24 MP and 10,000 px accepted, one past refused", async () => {
    for (const [width, height] of [
      [6000, 4000],
      [MAX_PHOTO_EDGE, MAX_PHOTO_PIXELS / MAX_PHOTO_EDGE],
    ] as const) {
      const body = (await expectAccepted(
        `${width} x ${height} (the limit)`,
        "/api/v1/photos",
        { method: "POST", headers: bearer(alice), body: photoForm(solidJpeg(width, height)) },
        201,
      )) as { photo: { width: number; height: number } };
      expect(body.photo).toMatchObject({ width, height });
    }
    await waitForQuietState();
    const over: [string, Uint8Array][] = [
      // 24,000,001 has no shape within 10,000 px a side; 24,000,002 = 5114 x 4693 is the smallest area over.
      ["5114 x 4693, the smallest area over 24 MP", solidJpeg(5114, 4693)],
      ["10,001 px wide", solidJpeg(MAX_PHOTO_EDGE + 1, 2399)],
      ["10,001 px high", solidJpeg(2399, MAX_PHOTO_EDGE + 1)],
      ["a header claiming 65535 x 65535", claimJpeg(65535, 65535)],
    ];
    const cases: HostileCase[] = over.map(([name, bytes]) => ({
      name,
      method: "POST",
      path: "/api/v1/photos",
      headers: bearer(alice),
      body: photoForm(bytes),
      status: 413,
      message: TOO_MANY_PIXELS,
    }));
    cases.push({
      name: "a header claiming 24 MP over a 16 x 16 scan (the binding cannot read it)",
      method: "POST",
      path: "/api/v1/photos",
      headers: bearer(alice),
      body: photoForm(claimJpeg(6000, 4000)),
      status: 400,
      message: UNREADABLE,
    });
    for (const c of cases) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
  });

  it("a photo's bytes through POST /api/v1/photos: 10 MB exactly accepted, one byte more refused", async () => {
    const exact = paddedJpeg(solidJpeg(1600, 1200), MAX_UPLOAD_BYTES);
    const body = (await expectAccepted(
      "10 MB exactly",
      "/api/v1/photos",
      { method: "POST", headers: bearer(alice), body: photoForm(exact) },
      201,
    )) as { photo: { bytes: number } };
    expect(body.photo.bytes).toBe(MAX_UPLOAD_BYTES);
    await waitForQuietState();
    await expectRefusedWithoutChange({
      name: "10 MB and one byte",
      method: "POST",
      path: "/api/v1/photos",
      headers: bearer(alice),
      body: photoForm(paddedJpeg(solidJpeg(1600, 1200), MAX_UPLOAD_BYTES + 1)),
      status: 413,
      message: TOO_LARGE,
    });
    ran++;
  });

  it("the resumable upload: 10 MB declared and a 24 MP first part accepted, one past refused", async () => {
    const h = { ...cookie(alice), "Content-Type": "application/json" };
    const declare = (size: number) => ({ name: "room.jpg", size, type: "image/jpeg" });
    const opened: string[] = [];
    for (const [name, bytes] of [
      ["a 24 MP first part", solidJpeg(6000, 4000)],
      ["a 10,000 px first part", solidJpeg(MAX_PHOTO_EDGE, 2400)],
    ] as const) {
      const up = (await expectAccepted(
        `${name}: declared`,
        "/api/uploads",
        { method: "POST", headers: h, body: JSON.stringify(declare(bytes.byteLength)) },
        201,
      )) as { id: string; chunkSize: number };
      opened.push(up.id);
      await expectAccepted(
        name,
        `/api/uploads/${up.id}/chunks/0`,
        { method: "PUT", headers: cookie(alice), body: bytes.slice(0, up.chunkSize) },
        200,
      );
    }
    const exact = (await expectAccepted(
      "10 MB declared",
      "/api/uploads",
      { method: "POST", headers: h, body: JSON.stringify(declare(MAX_UPLOAD_BYTES)) },
      201,
    )) as { id: string };
    opened.push(exact.id);
    for (const id of opened) {
      const res = await fetch(`${baseUrl()}/api/uploads/${id}`, {
        method: "DELETE",
        headers: { ...cookie(alice), Origin: baseUrl() },
      });
      expect(res.status).toBeLessThan(300);
    }
    await waitForQuietState();
    await expectRefusedWithoutChange({
      name: "10 MB and one byte declared",
      method: "POST",
      path: "/api/uploads",
      headers: h,
      body: declare(MAX_UPLOAD_BYTES + 1),
      status: 413,
      message: TOO_LARGE,
    });
    ran++;
    // One pixel past, in the first part: refused before a byte is kept (the session is closed as refused).
    for (const [name, bytes] of [
      ["5114 x 4693 in the first part", solidJpeg(5114, 4693)],
      ["10,001 px wide in the first part", solidJpeg(MAX_PHOTO_EDGE + 1, 2399)],
    ] as const) {
      const up = (await (
        await fetch(`${baseUrl()}/api/uploads`, {
          method: "POST",
          headers: { ...h, Origin: baseUrl() },
          body: JSON.stringify(declare(bytes.byteLength)),
        })
      ).json()) as { id: string; chunkSize: number };
      const res = await fetch(`${baseUrl()}/api/uploads/${up.id}/chunks/0`, {
        method: "PUT",
        headers: { ...cookie(alice), Origin: baseUrl() },
        body: bytes.slice(0, up.chunkSize),
      });
      const text = await res.text();
      expect(res.status, `${name}: ${text}`).toBe(422);
      expect(text).toContain(TOO_MANY_PIXELS);
      expectFailureShape(text, name);
      ran++;
    }
  });

  it("masks that only look like a PNG of the photo's size are refused; 2 MB exactly is accepted, one byte more is not", async () => {
    const h = { ...cookie(aliceMasks), ...PNG };
    const junk = new Uint8Array(1_900_000);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 2654435761) >>> 24;
    const cases: HostileCase[] = [
      {
        name: "PNG magic, the photo's size in IHDR, 1.9 MB of junk, IEND",
        method: "POST",
        path: masks(maskPhoto),
        headers: h,
        body: pngFrom({ width: 640, height: 480 }, junk),
        status: 422,
        message: "The mask PNG is incomplete or damaged.",
      },
      {
        name: "the photo's size in IHDR over the rows of a 320 x 240 mask",
        method: "POST",
        path: masks(maskPhoto),
        headers: h,
        body: pngFrom({ width: 640, height: 480 }, makeMaskPng(320, 240).subarray(41, -16)),
        status: 422,
        message: "incomplete or damaged",
      },
      {
        name: "an RGB photo of the photo's size",
        method: "POST",
        path: masks(maskPhoto),
        headers: h,
        body: makePng(640, 480),
        status: 422,
        message: "The mask must be black and white",
      },
      {
        name: "2 MB and one byte of a real mask",
        method: "POST",
        path: masks(maskPhoto),
        headers: h,
        body: paddedPng(FITS, MAX_MASK_BYTES + 1),
        status: 413,
        message: "The mask is larger than 2 MB.",
      },
    ];
    for (const c of cases) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
    await expectAccepted(
      "a real mask of 2 MB exactly",
      masks(maskPhoto),
      { method: "POST", headers: h, body: paddedPng(FITS, MAX_MASK_BYTES) },
      201,
    );
  });

  it("masks a user may store in an hour: the 300th is accepted and kept as the photo's one mask, the 301st is 429", {
    timeout: 600_000,
  }, async () => {
    // A fresh user: the rate limit counts per user, and this one has stored one mask above (the 2 MB one).
    const user = await createUser({ credits: 1 });
    const [photo = ""] = await seedPhotos(
      { baseUrl: baseUrl(), sessionToken: user.sessionToken! },
      1,
      "Rate",
      makeJpeg(640, 480, 80, 30, 1),
    );
    await waitForQuietState();
    const before = (await stateDigest()) as { r2: { objects: number } };
    const h = { ...cookie(user), ...PNG };
    for (let i = 1; i <= 300; i++) {
      const res = await fetch(`${baseUrl()}${masks(photo)}`, {
        method: "POST",
        headers: { Origin: baseUrl(), ...h },
        body: makeMaskPng(640, 480, (x, y) => x < i && y < 48),
      });
      const text = await res.text();
      expect(res.status, `mask ${i}: ${text.slice(0, 200)}`).toBe(201);
    }
    ran++;
    const after = (await stateDigest()) as { r2: { objects: number } };
    // Three hundred masks, one object: each replaced the one before.
    expect(after.r2.objects).toBe(before.r2.objects + 1);
    await expectRefusedWithoutChange({
      name: "the 301st mask in the hour",
      method: "POST",
      path: masks(photo),
      headers: h,
      body: makeMaskPng(640, 480, (x) => x > 600),
      status: 429,
    });
    ran++;
  });
});
