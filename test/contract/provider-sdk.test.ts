import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import jpeg from "jpeg-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProviderEmulator } from "../../emulators/provider.ts";
import { createProviderClient, PROVIDER_PATHS } from "../../workers/adapters/provider.ts";
import { makeJpeg } from "../fixtures/images.ts";

// The provider's official JS SDK (decor8ai 2.0.1, a dev dependency) drives our
// provider emulator for every call the production adapter makes, and gets the
// images it asked for; then the adapter makes the same calls and the emulator
// sees the same fields. If the emulator drifts from the real client (an
// endpoint it does not answer, num_images ignored), this fails. The answers
// themselves are checked against the provider's samples in
// provider-answers.test.ts.

const require = createRequire(import.meta.url);
type Sdk = {
  generateDesignsForRoom(o: Record<string, unknown>): Promise<Answer>;
  generateDesigns(image: Buffer, room: string, style: string, o?: Record<string, unknown>): Promise<Answer>;
  replaceSkyBehindHouse(url: string, sky: string): Promise<Answer>;
  removeObjectsFromRoom(url: string, maskUrl?: string): Promise<Answer>;
  upscaleImage(image: Buffer, scaleFactor: number): Promise<Answer>;
};
type Item = { data?: string; url?: string };
type Answer = {
  error?: string;
  message?: string;
  info?: { images?: Item[]; image?: Item; upscaled_image?: string };
};
const Decor8AI = require("decor8ai") as new (baseUrl?: string) => Sdk;

const KEY = "contract-test-key";
const SOURCE = makeJpeg(320, 240, 85);
let emulator: Server;
let images: Server;
let base = "";
let imageUrl = "";
let maskUrl = "";

function port(s: Server): number {
  return (s.address() as AddressInfo).port;
}

beforeAll(async () => {
  emulator = await startProviderEmulator({ port: 0, apiKey: KEY });
  base = `http://127.0.0.1:${port(emulator)}`;
  images = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "image/jpeg" }).end(Buffer.from(SOURCE));
  });
  await new Promise<void>((r) => images.listen(0, "127.0.0.1", () => r()));
  imageUrl = `http://127.0.0.1:${port(images)}/room.jpg`;
  maskUrl = `http://127.0.0.1:${port(images)}/mask.jpg`;
  process.env.DECOR8AI_API_KEY = KEY;
});

afterAll(async () => {
  await new Promise((r) => emulator?.close(r));
  await new Promise((r) => images?.close(r));
});

/** What the last call asked for, without when it came and how long it and its input's fetch took (and when). */
async function lastRequest(): Promise<Record<string, unknown>> {
  const log = (await (await fetch(`${base}/_emulator/requests`)).json()) as Record<string, unknown>[];
  const { at, ms, input_fetch_ms: _fetched, input_fetch_at: _fetchedAt, ...asked } = log.at(-1)!;
  expect(typeof at).toBe("number");
  expect(typeof ms).toBe("number");
  return asked;
}

/** Each image of an answer (inline, or downloaded from its address) decodes as a JPEG; returns them with sizes. */
async function decoded(answer: Answer): Promise<{ bytes: Buffer; width: number; height: number }[]> {
  expect(answer.error, answer.message).toBe("");
  const items: Item[] = [
    ...(answer.info?.images ?? []),
    ...(answer.info?.image ? [answer.info.image] : []),
    ...(answer.info?.upscaled_image ? [{ data: answer.info.upscaled_image }] : []),
  ];
  return Promise.all(
    items.map(async (i) => {
      const bytes = i.data ? Buffer.from(i.data, "base64") : Buffer.from(await (await fetch(i.url!)).arrayBuffer());
      const img = jpeg.decode(bytes, { useTArray: true, maxMemoryUsageInMB: 1024 });
      return { bytes, width: img.width, height: img.height };
    }),
  );
}

describe("the provider's official SDK against our emulator", () => {
  it.each([1, 2, 3, 4])("generateDesignsForRoom (JSON %s) with numImages gets that many distinct images", async (n) => {
    const sdk = new Decor8AI(base);
    const answer = await sdk.generateDesignsForRoom({
      inputImageUrl: imageUrl,
      roomType: "bedroom",
      designStyle: "scandinavian",
      numImages: n,
      colorScheme: "COLOR_SCHEME_6",
      specialityDecor: "SPECIALITY_DECOR_2",
      prompt: "A reading chair by the window",
      seed: 4242,
    });
    const out = await decoded(answer);
    expect(out).toHaveLength(n);
    expect(new Set(out.map((b) => b.bytes.toString("base64"))).size).toBe(n);
    expect(out.map((o) => [o.width, o.height])).toEqual(Array(n).fill([768, 512]));
    expect(await lastRequest()).toMatchObject({
      path: PROVIDER_PATHS.stage,
      input_image_url: imageUrl,
      room_type: "bedroom",
      design_style: "scandinavian",
      num_images: n,
      seed: 4242,
      color_scheme: "COLOR_SCHEME_6",
      speciality_decor: "SPECIALITY_DECOR_2",
    });
  });

  it("generateDesignsForRoom with an unknown colour scheme is refused the way the provider refuses it", async () => {
    const answer = await new Decor8AI(base).generateDesignsForRoom({
      inputImageUrl: imageUrl,
      roomType: "bedroom",
      designStyle: "modern",
      colorScheme: "COLOR_SCHEME_99",
    });
    expect(answer.error).toBe("InvalidInput");
    expect(answer.info).toBeUndefined();
  });

  it("generateDesignsForRoom with scaleFactor 3 gets 2304x1536 images", async () => {
    const answer = await new Decor8AI(base).generateDesignsForRoom({
      inputImageUrl: imageUrl,
      roomType: "bedroom",
      designStyle: "modern",
      scaleFactor: 3,
    });
    expect((await decoded(answer)).map((o) => [o.width, o.height])).toEqual([[2304, 1536]]);
    expect(await lastRequest()).toMatchObject({ scale_factor: 3 });
  });

  it("generateDesigns (multipart, the bytes uploaded) honours numImages", async () => {
    const answer = await new Decor8AI(base).generateDesigns(Buffer.from(SOURCE), "kitchen", "modern", { numImages: 2 });
    expect(await decoded(answer)).toHaveLength(2);
    expect(await lastRequest()).toMatchObject({
      path: PROVIDER_PATHS.stageLegacy,
      num_images: 2,
      input_image_sha256: createHash("sha256").update(SOURCE).digest("hex"),
    });
  });

  it.each(["day", "dusk", "night"])("replaceSkyBehindHouse (%s) gets one image in info.images", async (skyType) => {
    const answer = await new Decor8AI(base).replaceSkyBehindHouse(imageUrl, skyType);
    expect(await decoded(answer)).toHaveLength(1);
    expect(await lastRequest()).toMatchObject({
      path: PROVIDER_PATHS.sky,
      input_image_url: imageUrl,
      sky_type: skyType,
    });
  });

  it("removeObjectsFromRoom gets one 768x576 image, with or without a mask", async () => {
    const answer = await new Decor8AI(base).removeObjectsFromRoom(imageUrl);
    expect((await decoded(answer)).map((o) => [o.width, o.height])).toEqual([[768, 576]]);
    expect(await lastRequest()).toEqual({ path: PROVIDER_PATHS.removal, input_image_url: imageUrl });
    const masked = await new Decor8AI(base).removeObjectsFromRoom(imageUrl, maskUrl);
    expect(await decoded(masked)).toHaveLength(1);
    expect(await lastRequest()).toEqual({
      path: PROVIDER_PATHS.removal,
      input_image_url: imageUrl,
      mask_image_url: maskUrl,
    });
  });

  it("upscaleImage enlarges by its factor, and refuses an input over 1024 px as the provider says", async () => {
    const answer = await new Decor8AI(base).upscaleImage(Buffer.from(SOURCE), 3);
    expect((await decoded(answer)).map((o) => [o.width, o.height])).toEqual([[960, 720]]);
    expect(await lastRequest()).toMatchObject({ path: PROVIDER_PATHS.upscale, scale_factor: 3 });
    const big = await new Decor8AI(base).upscaleImage(Buffer.from(makeJpeg(1280, 720, 70)), 2);
    expect(big.error).toBe("InvalidInput");
    expect(big.info).toBeUndefined();
  });
});

describe("our production adapter makes the same calls", () => {
  const env = () => ({ PROVIDER_BASE_URL: base, PROVIDER_API_KEY: KEY });

  it("stages through the SDK's address endpoint with the SDK's field names, getting every variation", async () => {
    const sdk = new Decor8AI(base);
    const options = {
      roomType: "livingroom",
      designStyle: "modern",
      numImages: 3,
      colorScheme: "COLOR_SCHEME_4",
      specialityDecor: "SPECIALITY_DECOR_2",
      prompt: "A living room furnished in Modern style. A green sofa",
      seed: 7,
      scaleFactor: 3,
      designCreativity: 0.15,
    };
    await sdk.generateDesignsForRoom({
      inputImageUrl: imageUrl,
      ...options,
      designStyleImageUrl: imageUrl,
      designStyleImageStrength: 0.6,
    });
    const fromSdk = await lastRequest();
    const out = await createProviderClient(env()).stageMany({
      imageUrl,
      ...options,
      styleReference: { url: imageUrl, strength: 0.6 },
    });
    expect(out).toHaveLength(3);
    expect(fromSdk).toMatchObject({ scale_factor: 3, design_creativity: 0.15, design_style_image_strength: 0.6 });
    expect(await lastRequest()).toEqual(fromSdk);
  });

  it("falls back to the SDK's generateDesigns upload on a 404, sending the same fields and bytes", async () => {
    const options = { numImages: 3, colorScheme: "COLOR_SCHEME_4", specialityDecor: "SPECIALITY_DECOR_1", seed: 7 };
    await new Decor8AI(base).generateDesigns(Buffer.from(SOURCE), "livingroom", "modern", options);
    const fromSdk = await lastRequest();
    const missing = (async (url: RequestInfo | URL, init?: RequestInit) =>
      String(url).endsWith(PROVIDER_PATHS.stage)
        ? new Response("gone", { status: 404 })
        : fetch(url, init)) as typeof fetch;
    const out = await createProviderClient(env(), { fetcher: missing }).stageMany({
      imageUrl,
      image: async () => ({ bytes: SOURCE, contentType: "image/jpeg" }),
      roomType: "livingroom",
      designStyle: "modern",
      ...options,
    });
    expect(out).toHaveLength(3);
    expect(fromSdk).toMatchObject({ path: PROVIDER_PATHS.stageLegacy, num_images: 3, seed: 7 });
    expect(await lastRequest()).toEqual(fromSdk);
  });

  it("removes furniture with a mask and enlarges an image as the SDK does", async () => {
    const client = createProviderClient(env());
    await new Decor8AI(base).removeObjectsFromRoom(imageUrl, maskUrl);
    const removalFromSdk = await lastRequest();
    expect((await client.removeFurniture({ imageUrl, maskUrl })).byteLength).toBeGreaterThan(100);
    expect(await lastRequest()).toEqual(removalFromSdk);
    await new Decor8AI(base).upscaleImage(Buffer.from(SOURCE), 3);
    const upscaleFromSdk = await lastRequest();
    expect(
      (await client.upscale({ bytes: SOURCE, contentType: "image/jpeg", scaleFactor: 3 })).byteLength,
    ).toBeGreaterThan(100);
    expect(await lastRequest()).toEqual(upscaleFromSdk);
  });

  it("replaces the sky and removes furniture through the SDK's endpoints", async () => {
    const client = createProviderClient(env());
    await new Decor8AI(base).replaceSkyBehindHouse(imageUrl, "dusk");
    const skyFromSdk = await lastRequest();
    expect((await client.replaceSky({ imageUrl, skyType: "dusk" })).byteLength).toBeGreaterThan(100);
    expect(await lastRequest()).toEqual(skyFromSdk);
    await new Decor8AI(base).removeObjectsFromRoom(imageUrl);
    const removalFromSdk = await lastRequest();
    expect((await client.removeFurniture({ imageUrl })).byteLength).toBeGreaterThan(100);
    expect(await lastRequest()).toEqual(removalFromSdk);
  });
});
