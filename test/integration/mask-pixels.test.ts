import { creditReservations } from "@db/schema";
import { makeMaskPng, makePng, paddedPng, pngFrom } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { api, balance, expectSettled, settleJob } from "@test/support/listing";
import { makePhoto, storedKeys } from "@test/support/photos";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { signedMaskOf } from "@test/support/signed";
import { workerFetch } from "@test/support/worker";
import { eq } from "drizzle-orm";
import { encode } from "fast-png";
import { beforeEach, describe, expect, it } from "vitest";
import { MASK_MESSAGES, MAX_MASK_BYTES } from "~/shared/masks";

// Masks decoded whole, one channel of gray, one per photo (issue 45, part 7;
// docs/decisions/0211-masks-decoded-once-per-photo.md). The hostile run stored any 1.9 MB blob that started and
// ended like a PNG, 300 an hour, each a new object: about 570 MB an hour per user. makePhoto's original is 40 x 30.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

async function postMask(cookie: string, photoId: string, body: Uint8Array) {
  const res = await workerFetch(`/api/photos/${photoId}/masks`, {
    method: "POST",
    headers: { Cookie: cookie, Origin: "http://localhost", "Content-Type": "image/png" },
    body: body as Uint8Array<ArrayBuffer>,
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  return { status: res.status, body: (await res.json()) as any };
}

const masksOf = (keys: string[]) => keys.filter((k) => /\/mask\.png$|\/masks\//.test(k));

async function zlib(raw: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([raw as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Rows of `width` samples of `channels` 8-bit samples each, filter 0, `pixel(x, y)` giving each pixel's samples. */
function rawRows(width: number, height: number, pixel: (x: number, y: number) => number[]): Uint8Array {
  const channels = pixel(0, 0).length;
  const out = new Uint8Array((width * channels + 1) * height);
  for (let y = 0, at = 0; y < height; y++) {
    out[at++] = 0;
    for (let x = 0; x < width; x++) for (const v of pixel(x, y)) out[at++] = v;
  }
  return out;
}

/** A canvas's mask: RGBA, every pixel opaque black or white. */
const rgba = (w: number, h: number, white: (x: number, y: number) => boolean) => {
  const data = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++)
    data.set(white(i % w, Math.floor(i / w)) ? [255, 255, 255, 255] : [0, 0, 0, 255], i * 4);
  return data;
};

describe("a mask is decoded whole, as one channel of gray, before it is stored", () => {
  it("refuses what only looks like a PNG of the right size, and colour, transparency, palettes and interlacing", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const good = makeMaskPng(40, 30, (x) => x < 20);
    const junk = new Uint8Array(1_900_000);
    crypto.getRandomValues(junk.subarray(0, 65536));
    for (let i = 65536; i < junk.length; i += 65536) junk.copyWithin(i, 0, 65536);
    const badChecksum = good.slice();
    // The zlib stream's Adler-32 sits just before the IDAT chunk's CRC, which sits before IEND (12 bytes).
    const adlerEnd = badChecksum.length - 12 - 4 - 1;
    badChecksum[adlerEnd] = badChecksum[adlerEnd]! ^ 0xff;
    const unknownFilter = pngFrom({ width: 40, height: 30 }, await zlib(rawRows(40, 30, () => [0]).fill(7, 0, 1)));
    const interlaced = good.slice();
    interlaced[28] = 1;
    const cases: [string, Uint8Array, "damaged" | "notGray"][] = [
      ["1.9 MB of junk between a right header and IEND", pngFrom({ width: 40, height: 30 }, junk), "damaged"],
      [
        "the rows of a 20 x 30 image under a 40 x 30 header",
        pngFrom({ width: 40, height: 30 }, await zlib(rawRows(20, 30, () => [255]))),
        "damaged",
      ],
      [
        "10 MB of zeros in a few KB (rows past the last)",
        pngFrom({ width: 40, height: 30 }, await zlib(new Uint8Array(10_000_000))),
        "damaged",
      ],
      ["a zlib stream whose checksum is wrong", badChecksum, "damaged"],
      ["a row with filter type 7", unknownFilter, "damaged"],
      ["an RGB photo of the right size", makePng(40, 30), "notGray"],
      [
        "RGBA with one coloured pixel",
        encode({ width: 40, height: 30, channels: 4, data: rgba(40, 30, () => false).fill(9, 0, 1) }),
        "notGray",
      ],
      [
        "RGBA with one see-through pixel",
        encode({ width: 40, height: 30, channels: 4, data: rgba(40, 30, () => false).fill(0, 3, 4) }),
        "notGray",
      ],
      [
        "gray + alpha, not opaque",
        encode({ width: 40, height: 30, channels: 2, data: new Uint8Array(40 * 30 * 2) }),
        "notGray",
      ],
      [
        "a palette PNG",
        encode({
          width: 40,
          height: 30,
          channels: 1,
          data: new Uint8Array(1200),
          palette: [
            [0, 0, 0],
            [255, 255, 255],
          ],
        }),
        "notGray",
      ],
      ["an interlaced PNG", interlaced, "notGray"],
    ];
    // Every answer at once, so a failure lists each case the server got wrong.
    const answers: string[] = [];
    for (const [name, bytes] of cases) {
      const res = await postMask(user.cookie, photo.id, bytes);
      answers.push(`${name}: ${res.status} ${res.body.code ?? ""} ${res.body.error ?? ""}`);
    }
    expect(answers).toEqual(cases.map(([name, , message]) => `${name}: 422 unprocessable ${MASK_MESSAGES[message]}`));
    expect(masksOf(await storedKeys(user.id))).toEqual([]);
  });

  it("accepts the forms a mask comes in: 8-bit, 1-bit and 16-bit gray, RGBA gray as a canvas writes it, and 2 MB exactly", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const left = (x: number) => x < 20;
    const oneBit = new Uint8Array(5 * 30);
    for (let y = 0; y < 30; y++) oneBit.fill(0xff, y * 5, y * 5 + 2).fill(0xf0, y * 5 + 2, y * 5 + 3);
    const forms: [string, Uint8Array][] = [
      ["8-bit gray", makeMaskPng(40, 30, left)],
      ["1-bit gray", encode({ width: 40, height: 30, channels: 1, depth: 1, data: oneBit })],
      [
        "16-bit gray",
        encode({ width: 40, height: 30, channels: 1, depth: 16, data: new Uint16Array(1200).fill(65535, 0, 600) }),
      ],
      [
        "RGBA, opaque black and white (a canvas)",
        encode({ width: 40, height: 30, channels: 4, data: rgba(40, 30, left) }),
      ],
      [
        "RGB gray",
        pngFrom(
          { width: 40, height: 30, colorType: 2 },
          await zlib(rawRows(40, 30, (x) => (left(x) ? [200, 200, 200] : [0, 0, 0]))),
        ),
      ],
      [
        "gray + alpha, opaque",
        pngFrom({ width: 40, height: 30, colorType: 4 }, await zlib(rawRows(40, 30, () => [255, 255]))),
      ],
      ["2 MB exactly", paddedPng(makeMaskPng(40, 30, left), MAX_MASK_BYTES)],
    ];
    for (const [name, bytes] of forms) {
      const res = await postMask(user.cookie, photo.id, bytes);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body.mask).toMatchObject({ width: 40, height: 30, source: "original" });
    }
    const over = await postMask(user.cookie, photo.id, paddedPng(makeMaskPng(40, 30, left), MAX_MASK_BYTES + 1));
    expect(over.status).toBe(413);
    expect(over.body.error).toBe(MASK_MESSAGES.tooLarge);
  });
});

describe("one mask per photo", () => {
  it("fifty masks stored one after another leave one object, the newest; a replaced one's id is refused", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const ids: string[] = [];
    for (let i = 1; i <= 50; i++) {
      const res = await postMask(
        user.cookie,
        photo.id,
        makeMaskPng(40, 30, (x, y) => x + y < i),
      );
      expect(res.status).toBe(201);
      ids.push(res.body.mask.id);
      expect(masksOf(await storedKeys(user.id))).toHaveLength(1);
    }
    expect(masksOf(await storedKeys(user.id))).toEqual([`photos/${user.id}/${photo.id}/mask.png`]);
    expect(new Set(ids).size).toBe(50);
    const first = ids[0]!;
    const last = ids.at(-1)!;
    const refused = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, { kind: "removal", maskId: first });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toBe(MASK_MESSAGES.notFound);
    expect(await balance(user.id)).toBe(2);
    // The provider's address for a replaced mask serves nothing; the newest's serves it.
    expect((await workerFetch(await signedMaskOf(photo.id, first))).status).toBe(404);
    const served = await workerFetch(await signedMaskOf(photo.id, last));
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(makeMaskPng(40, 30, (x, y) => x + y < 50));
    const fits = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, { kind: "removal", maskId: last });
    expect(fits.status).toBe(202);
    expect((await settleJob(user.cookie, fits.body.job.id)).status).toBe("succeeded");
    expect(provider.calls[0]!.mask?.bytes).toEqual(makeMaskPng(40, 30, (x, y) => x + y < 50));
    await expectSettled(user.id);
  });

  it("a queued removal whose mask is replaced before its call fails without calling the provider, and is refunded", async () => {
    const user = await signedIn({ credits: 5 });
    const others = await Promise.all([1, 2, 3, 4].map(() => makePhoto(user.id)));
    const photo = await makePhoto(user.id);
    // Four calls at once fill the plan's concurrency and wait; the brushed removal is queued behind them.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    provider.hold = () => held;
    const running = [];
    for (const p of others)
      running.push(await api(user.cookie, "POST", `/api/photos/${p.id}/jobs`, { kind: "removal" }));
    for (let i = 0; i < 200 && provider.calls.length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    expect(provider.calls).toHaveLength(4);
    const a = await postMask(
      user.cookie,
      photo.id,
      makeMaskPng(40, 30, (x) => x < 10),
    );
    const queued = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
      kind: "removal",
      maskId: a.body.mask.id,
    });
    expect(queued.status).toBe(202);
    expect(
      (
        await postMask(
          user.cookie,
          photo.id,
          makeMaskPng(40, 30, (x) => x > 30),
        )
      ).status,
    ).toBe(201);
    release();
    for (const r of running) expect((await settleJob(user.cookie, r.body.job.id)).status).toBe("succeeded");
    const job = await settleJob(user.cookie, queued.body.job.id);
    expect(job).toMatchObject({ status: "failed", error: MASK_MESSAGES.replaced });
    expect(provider.calls).toHaveLength(4);
    const held2 = await db
      .select()
      .from(creditReservations)
      .where(eq(creditReservations.key, queued.body.job.id))
      .all();
    expect(held2.map((r) => r.status)).toEqual(["refunded"]);
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });
});
