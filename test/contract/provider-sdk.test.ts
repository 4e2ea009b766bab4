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
// endpoint it does not answer, num_images ignored), this fails.

const require = createRequire(import.meta.url);
type Sdk = {
  generateDesignsForRoom(o: Record<string, unknown>): Promise<Answer>;
  generateDesigns(image: Buffer, room: string, style: string, o?: Record<string, unknown>): Promise<Answer>;
  replaceSkyBehindHouse(url: string, sky: string): Promise<Answer>;
  removeObjectsFromRoom(url: string): Promise<Answer>;
};
type Answer = { error?: string; message?: string; info?: { images?: { data?: string; url?: string }[] } };
const Decor8AI = require("decor8ai") as new (baseUrl?: string) => Sdk;

const KEY = "contract-test-key";
const SOURCE = makeJpeg(320, 240, 85);
let emulator: Server;
let images: Server;
let base = "";
let imageUrl = "";

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
  process.env.DECOR8AI_API_KEY = KEY;
});

afterAll(async () => {
  await new Promise((r) => emulator?.close(r));
  await new Promise((r) => images?.close(r));
});

/** What the last call asked for, without when it came and how long it took (which differ from call to call). */
async function lastRequest(): Promise<Record<string, unknown>> {
  const log = (await (await fetch(`${base}/_emulator/requests`)).json()) as Record<string, unknown>[];
  const { at, ms, ...asked } = log.at(-1)!;
  expect(typeof at).toBe("number");
  expect(typeof ms).toBe("number");
  return asked;
}

/** Each image decodes as a JPEG; returns their bytes. */
function decoded(answer: Answer): Buffer[] {
  expect(answer.error, answer.message).toBeUndefined();
  const list = answer.info?.images ?? [];
  return list.map((i) => {
    const bytes = Buffer.from(i.data!, "base64");
    const img = jpeg.decode(bytes, { useTArray: true });
    expect(img.width).toBeGreaterThan(0);
    return bytes;
  });
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
    const out = decoded(answer);
    expect(out).toHaveLength(n);
    expect(new Set(out.map((b) => b.toString("base64"))).size).toBe(n);
    expect(await lastRequest()).toMatchObject({
      path: PROVIDER_PATHS.stageByUrl,
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

  it("generateDesigns (multipart, the bytes uploaded) honours numImages", async () => {
    const answer = await new Decor8AI(base).generateDesigns(Buffer.from(SOURCE), "kitchen", "modern", { numImages: 2 });
    expect(decoded(answer)).toHaveLength(2);
    expect(await lastRequest()).toMatchObject({
      path: PROVIDER_PATHS.stage,
      num_images: 2,
      input_image_sha256: createHash("sha256").update(SOURCE).digest("hex"),
    });
  });

  it.each(["day", "dusk", "night"])("replaceSkyBehindHouse (%s) gets one image in info.images", async (skyType) => {
    const answer = await new Decor8AI(base).replaceSkyBehindHouse(imageUrl, skyType);
    expect(decoded(answer)).toHaveLength(1);
    expect(await lastRequest()).toMatchObject({
      path: PROVIDER_PATHS.sky,
      input_image_url: imageUrl,
      sky_type: skyType,
    });
  });

  it("removeObjectsFromRoom gets one image", async () => {
    const answer = await new Decor8AI(base).removeObjectsFromRoom(imageUrl);
    expect(decoded(answer)).toHaveLength(1);
    expect(await lastRequest()).toMatchObject({ path: PROVIDER_PATHS.removal, input_image_url: imageUrl });
  });
});

describe("our production adapter makes the same calls", () => {
  const env = () => ({ PROVIDER_BASE_URL: base, PROVIDER_API_KEY: KEY });

  it("stages by upload as the SDK's generateDesigns does, the same fields and bytes, getting every variation", async () => {
    const options = {
      numImages: 3,
      colorScheme: "COLOR_SCHEME_4",
      specialityDecor: "SPECIALITY_DECOR_1",
      prompt: "A green sofa",
      seed: 7,
    };
    await new Decor8AI(base).generateDesigns(Buffer.from(SOURCE), "livingroom", "modern", options);
    const fromSdk = await lastRequest();
    const out = await createProviderClient(env()).stageMany({
      imageUrl,
      image: async () => ({ bytes: SOURCE, contentType: "image/jpeg" }),
      roomType: "livingroom",
      designStyle: "modern",
      ...options,
    });
    expect(out).toHaveLength(3);
    expect(fromSdk).toMatchObject({ path: PROVIDER_PATHS.stage, num_images: 3, seed: 7 });
    expect(await lastRequest()).toEqual(fromSdk);
  });

  it("stages through the SDK's address endpoint with the SDK's field names, getting every variation", async () => {
    const sdk = new Decor8AI(base);
    const options = {
      roomType: "livingroom",
      designStyle: "modern",
      numImages: 3,
      colorScheme: "COLOR_SCHEME_4",
      seed: 7,
    };
    await sdk.generateDesignsForRoom({ inputImageUrl: imageUrl, ...options });
    const fromSdk = await lastRequest();
    const out = await createProviderClient(env()).stageMany({ imageUrl, ...options });
    expect(out).toHaveLength(3);
    expect(await lastRequest()).toEqual(fromSdk);
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
