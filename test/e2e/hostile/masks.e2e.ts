import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimPng, GIF_BYTES, makeJpeg, makeMaskPng, makePng } from "../../fixtures/images.ts";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import {
  expectRefusedWithoutChange,
  type HostileCase,
  SQL_META,
  stateDigest,
  TRAVERSAL,
  waitForQuietState,
} from "./harness.ts";

// The removal brush's routes attacked (issue 33, part 5; docs/decisions/0195-removal-brush-masks.md):
// POST /api/photos/:id/masks, the mask in a removal's job request, and the mask's signed address. Masks that are not
// images, oversized masks, masks of the wrong size, a stranger's photo: each refused with a 4xx and its message, and
// D1 and R2 exactly as they were.

let alice: FixtureUser;
let bob: FixtureUser;
let alicePhoto = "";
let bobPhoto = "";
let ran = 0;
const cookie = (u: FixtureUser) => ({ Cookie: `sw_session=${u.sessionToken}` });
const PNG = { "Content-Type": "image/png" };
/** The photos seeded here are 640 x 480 (not seedPhotos' default room): a mask that fits them, white over a corner. */
const FITS = makeMaskPng(640, 480, (x, y) => x < 64 && y < 48);
const masks = (photo: string, query = "") => `/api/photos/${photo}/masks${query}`;

beforeAll(async () => {
  alice = await createUser({ credits: 3 });
  bob = await createUser({ credits: 3 });
  const photo = makeJpeg(640, 480, 80, 30, 1);
  [alicePhoto = ""] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: alice.sessionToken! }, 1, "Alice", photo);
  [bobPhoto = ""] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: bob.sessionToken! }, 1, "Bob", photo);
  await waitForQuietState();
});

afterAll(() => {
  console.log(`hostile-input suite (removal masks): ${ran} cases ran`);
});

function run(cases: () => HostileCase[]) {
  return async () => {
    for (const c of cases()) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
  };
}

describe("hostile input: removal masks", () => {
  it(
    "masks that are not images",
    run((): HostileCase[] => {
      const h = { ...cookie(alice), ...PNG };
      const notPng = /must be a PNG image/;
      return [
        {
          name: "text",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: "white here",
          status: 415,
          message: notPng,
        },
        { name: "empty", method: "POST", path: masks(alicePhoto), headers: h, body: "", status: 415, message: notPng },
        {
          name: "a JPEG",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: makeJpeg(640, 480),
          status: 415,
          message: notPng,
        },
        {
          name: "a GIF",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: GIF_BYTES,
          status: 415,
          message: notPng,
        },
        {
          name: "an HTML page",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: "<script>alert(1)</script>",
          status: 415,
          message: notPng,
        },
        {
          name: "the PNG signature alone",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: FITS.slice(0, 8),
          status: 422,
          message: "incomplete or damaged",
        },
        {
          name: "a PNG cut off before its end",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: FITS.slice(0, FITS.byteLength - 12),
          status: 422,
          message: "incomplete or damaged",
        },
        {
          name: "a real PNG declared as JSON",
          method: "POST",
          path: masks(alicePhoto),
          headers: { ...cookie(alice), "Content-Type": "application/json" },
          body: FITS,
          status: 415,
          message: "image/png",
        },
        {
          name: "a real PNG as a form upload",
          method: "POST",
          path: masks(alicePhoto),
          headers: cookie(alice),
          body: (() => {
            const fd = new FormData();
            fd.set("mask", new Blob([FITS], { type: "image/png" }), "mask.png");
            return fd;
          })(),
          status: 415,
        },
      ];
    }),
  );

  it(
    "oversized masks and masks of the wrong size",
    run((): HostileCase[] => {
      const h = { ...cookie(alice), ...PNG };
      const wrongSize = /it must be the size of the image it is painted on, 640 x 480 px/;
      return [
        {
          name: "over 2 MB",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: new Uint8Array(2 * 1024 * 1024 + 1).fill(0x89),
          status: 413,
          message: "The mask is larger than 2 MB.",
        },
        {
          name: "a real PNG over 2 MB (uncompressed)",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: makePng(1200, 700),
          status: 413,
          message: "larger than 2 MB",
        },
        {
          name: "a header claiming 60000 x 60000 (never decoded)",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: claimPng(60000, 60000),
          status: 422,
          message: wrongSize,
        },
        {
          name: "one pixel wider",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: makeMaskPng(641, 480),
          status: 422,
          message: "The mask is 641 x 480 px",
        },
        {
          name: "turned on its side",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: makeMaskPng(480, 640),
          status: 422,
          message: wrongSize,
        },
        {
          name: "the display's size, not the photo's",
          method: "POST",
          path: masks(alicePhoto),
          headers: h,
          body: makeMaskPng(320, 240),
          status: 422,
          message: wrongSize,
        },
      ];
    }),
  );

  it(
    "a stranger's photo, no session, and hostile sources",
    run((): HostileCase[] => {
      const h = { ...cookie(alice), ...PNG };
      return [
        {
          name: "Bob's photo",
          method: "POST",
          path: masks(bobPhoto),
          headers: h,
          body: FITS,
          status: 404,
          message: "Not found.",
        },
        {
          name: "Bob's photo, painted on Bob's original",
          method: "POST",
          path: masks(bobPhoto, "?source=original"),
          headers: h,
          body: FITS,
          status: 404,
        },
        { name: "no session", method: "POST", path: masks(alicePhoto), headers: PNG, body: FITS, status: 401 },
        {
          name: "a forged session",
          method: "POST",
          path: masks(alicePhoto),
          headers: { ...PNG, Cookie: "sw_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
          body: FITS,
          status: 401,
        },
        {
          name: "cross-site",
          method: "POST",
          path: masks(alicePhoto),
          headers: { ...h, Origin: "https://evil.example" },
          body: FITS,
          status: 403,
        },
        ...[TRAVERSAL, SQL_META, "x".repeat(300), "\u0000"].map(
          (source): HostileCase => ({
            name: `source ${JSON.stringify(source.slice(0, 20))}`,
            method: "POST",
            path: masks(alicePhoto, `?source=${encodeURIComponent(source)}`),
            headers: h,
            body: FITS,
            status: 404,
          }),
        ),
        ...[TRAVERSAL, SQL_META].map(
          (id): HostileCase => ({
            name: `photo id ${JSON.stringify(id.slice(0, 12))}`,
            method: "POST",
            path: masks(encodeURIComponent(id)),
            headers: h,
            body: FITS,
          }),
        ),
        { name: "GET", method: "GET", path: masks(alicePhoto), headers: cookie(alice), status: 405 },
        { name: "PUT", method: "PUT", path: masks(alicePhoto), headers: h, body: FITS, status: 405 },
      ];
    }),
  );

  it("a chunked mask body past 2 MB is cut off and refused, nothing stored", async () => {
    const before = await stateDigest();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 3 * 1024 * 1024) return controller.close();
        controller.enqueue(sent === 0 ? FITS.slice(0, 64 * 1024) : new Uint8Array(64 * 1024));
        sent += 64 * 1024;
      },
    });
    let status = 0;
    try {
      const res = await fetch(`${baseUrl()}${masks(alicePhoto)}`, {
        method: "POST",
        headers: { Origin: baseUrl(), ...cookie(alice), ...PNG },
        body,
        duplex: "half",
      } as RequestInit & { duplex: "half" });
      status = res.status;
      expect(await res.text()).toContain("larger than 2 MB");
    } catch {
      status = 413; // The server may close a connection it has refused mid-stream: a refusal too.
    }
    expect(status).toBe(413);
    expect(await stateDigest()).toEqual(before);
    ran++;
  });

  it("a removal naming a mask it may not use", async () => {
    // Bob stores a mask of his own photo: its id is real, and names nothing of Alice's.
    const stored = await fetch(`${baseUrl()}${masks(bobPhoto)}`, {
      method: "POST",
      headers: { Origin: baseUrl(), ...cookie(bob), ...PNG },
      body: makeMaskPng(640, 480, (x) => x > 600),
    });
    expect(stored.status).toBe(201);
    const bobMask = ((await stored.json()) as { mask: { id: string } }).mask.id;
    await waitForQuietState();
    const jobs = (photo: string) => `/api/photos/${photo}/jobs`;
    const h = { ...cookie(alice), "Content-Type": "application/json" };
    const cases: HostileCase[] = [
      {
        name: "Bob's mask on Alice's photo",
        method: "POST",
        path: jobs(alicePhoto),
        headers: h,
        body: { kind: "removal", maskId: bobMask },
        status: 404,
        message: "mask was not found",
      },
      {
        name: "Bob's mask on Bob's photo",
        method: "POST",
        path: jobs(bobPhoto),
        headers: h,
        body: { kind: "removal", maskId: bobMask },
        status: 404,
        message: "Not found.",
      },
      {
        name: "a mask for staging",
        method: "POST",
        path: jobs(alicePhoto),
        headers: h,
        body: { kind: "stage", roomType: "Bedroom", designStyle: "Modern", maskId: bobMask },
        status: 400,
        message: "for removing things only",
      },
      {
        name: "a mask for a sky",
        method: "POST",
        path: jobs(alicePhoto),
        headers: h,
        body: { kind: "sky", skyType: "day", maskId: bobMask },
        status: 400,
      },
      ...[TRAVERSAL, SQL_META, "A".repeat(64), `${"0".repeat(64)}.png`, ""].map(
        (maskId): HostileCase => ({
          name: `mask id ${JSON.stringify(maskId.slice(0, 16))}`,
          method: "POST",
          path: jobs(alicePhoto),
          headers: h,
          body: { kind: "removal", maskId },
          status: 400,
          message: "That is not a mask id.",
        }),
      ),
      ...[42, null, ["x"], { id: "x" }].map(
        (maskId): HostileCase => ({
          name: `mask id of type ${JSON.stringify(maskId)}`,
          method: "POST",
          path: jobs(alicePhoto),
          headers: h,
          body: { kind: "removal", maskId },
          status: 400,
        }),
      ),
      {
        name: "a mask never stored",
        method: "POST",
        path: jobs(alicePhoto),
        headers: h,
        body: { kind: "removal", maskId: "f".repeat(64) },
        status: 404,
      },
    ];
    for (const c of cases) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
  });

  it(
    "the mask's signed address without its signature",
    run((): HostileCase[] => {
      const path = `/api/signed/photos/${bobPhoto}/masks/${"0".repeat(64)}`;
      return [
        { name: "no signature", method: "GET", path, headers: cookie(bob), status: 403 },
        {
          name: "a forged signature",
          method: "GET",
          path: `${path}?exp=99999999999999&sig=${"a".repeat(64)}`,
          status: 403,
        },
        { name: "a malformed expiry", method: "GET", path: `${path}?exp=1e99&sig=${"a".repeat(64)}`, status: 403 },
        {
          name: "traversal",
          method: "GET",
          path: `/api/signed/photos/${bobPhoto}/masks/${encodeURIComponent(TRAVERSAL)}?exp=1&sig=${"a".repeat(64)}`,
          status: 403,
        },
        { name: "a write", method: "POST", path, headers: { ...cookie(bob), ...PNG }, body: FITS, status: 405 },
      ];
    }),
  );
});
