import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProviderEmulator } from "../../emulators/provider.ts";
import { createProviderClient, ProviderError } from "../../workers/adapters/provider.ts";
import { makeJpeg } from "../fixtures/images.ts";

// The provider's answers as its own repository shows them (test/contract/fixtures/provider/*.json, each naming the
// file it was transcribed from), replayed through our production adapter by a stand-in that answers exactly those
// bytes; then the provider emulator's answers are held against the same samples, shape and sizes. The SDK never
// parses answers, so driving it (provider-sdk.test.ts) proves nothing about them: this does.
// docs/decisions/0151-provider-as-documented.md

interface Fixture {
  endpoint: string;
  repository: string;
  commit: string;
  source: string;
  transcribed: string;
  answer: Record<string, unknown>;
}

const DIR = join(import.meta.dirname, "fixtures/provider");
const fixtures = Object.fromEntries(
  readdirSync(DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(DIR, f), "utf8")) as Fixture]),
);
const IMAGE = makeJpeg(96, 64, 85);
const KEY = "replay-key";

/** The fixture's answer with its placeholders made real: base64 of IMAGE, addresses on the replay server. */
function realised(answer: unknown, base: string): unknown {
  return JSON.parse(
    JSON.stringify(answer)
      .replaceAll("<base64-encoded_data>", Buffer.from(IMAGE).toString("base64"))
      .replace(/"url":"[^"]*"/g, `"url":"${base}/files/result.jpg"`),
  );
}

let replay: Server;
let replayBase = "";
/** What the replay server answers next, and the paths it was asked for. */
let next: unknown = {};
let asked: string[] = [];

beforeAll(async () => {
  replay = createServer((req, res) => {
    asked.push(req.url ?? "");
    if (req.url === "/files/result.jpg") return res.writeHead(200, { "Content-Type": "image/jpeg" }).end(IMAGE);
    req.resume();
    req.on("end", () => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(next)));
  });
  await new Promise<void>((r) => replay.listen(0, "127.0.0.1", () => r()));
  replayBase = `http://127.0.0.1:${(replay.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => replay?.close(r));
});

function adapter() {
  return createProviderClient({ PROVIDER_BASE_URL: replayBase, PROVIDER_API_KEY: KEY });
}

async function answering(name: string): Promise<void> {
  const fixture = fixtures[name];
  if (!fixture) throw new Error(`no fixture ${name}`);
  expect(fixture.repository).toBe("immex-tech/decor8ai-sdk");
  expect(fixture.source.length).toBeGreaterThan(10);
  next = realised(fixture.answer, replayBase);
  asked = [];
}

const input = { imageUrl: "http://app.test/signed/x", roomType: "bedroom", designStyle: "modern" };

describe("the provider's sample answers, replayed through our adapter", () => {
  it("reads /generate_designs_for_room's info.images[].url and downloads the image", async () => {
    await answering("generate_designs_for_room");
    expect(await adapter().stageMany(input)).toEqual([IMAGE]);
    expect(asked).toEqual(["/generate_designs_for_room", "/files/result.jpg"]);
  });

  it("reads /remove_objects_from_room's single info.image and downloads it", async () => {
    await answering("remove_objects_from_room");
    expect(await adapter().removeFurniture({ imageUrl: input.imageUrl })).toEqual(IMAGE);
    expect(asked).toEqual(["/remove_objects_from_room", "/files/result.jpg"]);
  });

  it("reads /replace_sky_behind_house's info.images[].data", async () => {
    await answering("replace_sky_behind_house");
    expect(await adapter().replaceSky({ imageUrl: input.imageUrl, skyType: "day" })).toEqual(IMAGE);
  });

  it("reads the legacy /generate_designs' info.images[].data (its fallback after a 404)", async () => {
    await answering("generate_designs");
    const { imageUrl: _, ...rest } = input;
    const client = createProviderClient(
      { PROVIDER_BASE_URL: replayBase, PROVIDER_API_KEY: KEY },
      {
        fetcher: (async (url: RequestInfo | URL, init?: RequestInit) =>
          String(url).endsWith("/generate_designs_for_room")
            ? new Response("gone", { status: 404 })
            : fetch(url, init)) as typeof fetch,
      },
    );
    const image = async () => ({ bytes: IMAGE, contentType: "image/jpeg" });
    expect(await client.stageMany({ imageUrl: "http://app.test/signed/x", image, ...rest })).toEqual([IMAGE]);
    expect(asked).toEqual(["/generate_designs"]);
  });

  it("reads /upscale_image's info.upscaled_image", async () => {
    await answering("upscale_image");
    expect(await adapter().upscale({ bytes: IMAGE, contentType: "image/jpeg", scaleFactor: 3 })).toEqual(IMAGE);
  });

  it("takes a 200 with a non-empty error as the failure it is, on every endpoint", async () => {
    await answering("error");
    const message = "Invalid input image. Please check the input image and try again.";
    const client = adapter();
    for (const call of [
      () => client.stageMany(input),
      () => client.removeFurniture({ imageUrl: input.imageUrl }),
      () => client.replaceSky({ imageUrl: input.imageUrl, skyType: "day" }),
      () => client.upscale({ bytes: IMAGE, contentType: "image/jpeg", scaleFactor: 2 }),
    ]) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).message).toContain(message);
    }
  });
});

/** The shape of a JSON value: keys and value types, arrays by their first item. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return [v.length > 0 ? shape(v[0]) : "empty"];
  if (v !== null && typeof v === "object")
    return Object.fromEntries(
      Object.entries(v)
        .map(([k, x]): [string, unknown] => [k, shape(x)])
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  return typeof v;
}

describe("the provider emulator answers as the provider's samples do", () => {
  let emulator: Server;
  let base = "";
  let images: Server;
  let imageUrl = "";

  beforeAll(async () => {
    emulator = await startProviderEmulator({ port: 0, apiKey: KEY });
    base = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`;
    images = createServer((_req, res) => res.writeHead(200, { "Content-Type": "image/jpeg" }).end(IMAGE));
    await new Promise<void>((r) => images.listen(0, "127.0.0.1", () => r()));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/room.jpg`;
  });

  afterAll(async () => {
    await new Promise((r) => emulator?.close(r));
    await new Promise((r) => images?.close(r));
  });

  async function post(path: string, body: Record<string, unknown> | FormData): Promise<Record<string, unknown>> {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${KEY}`,
        ...(body instanceof FormData ? {} : { "Content-Type": "application/json" }),
      },
      body: body instanceof FormData ? body : JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }

  function expectLike(got: Record<string, unknown>, name: string) {
    const sample = fixtures[name]!.answer;
    expect(shape(got), name).toEqual(shape(sample));
    if (sample.message) expect(got.message, name).toBe(sample.message);
    expect(got.error).toBe("");
  }

  it("/generate_designs_for_room: info.images[] of {uuid, url, width, height}, 768x512 like the sample", async () => {
    const got = await post("/generate_designs_for_room", {
      input_image_url: imageUrl,
      room_type: "bedroom",
      design_style: "modern",
      num_images: 1,
    });
    expectLike(got, "generate_designs_for_room");
    const [item] = (got.info as { images: { url: string; width: number; height: number }[] }).images;
    expect([item!.width, item!.height]).toEqual([768, 512]);
    const file = await fetch(item!.url);
    expect(file.headers.get("Content-Type")).toBe("image/jpeg");
    expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  it("/remove_objects_from_room: one info.image of {uuid, width, height, url}, 768x576 like the sample", async () => {
    const got = await post("/remove_objects_from_room", { input_image_url: imageUrl });
    expectLike(got, "remove_objects_from_room");
    const image = (got.info as { image: { width: number; height: number } }).image;
    expect([image.width, image.height]).toEqual([768, 576]);
  });

  it("/replace_sky_behind_house: info.images[] of {uuid, data}", async () => {
    expectLike(
      await post("/replace_sky_behind_house", { input_image_url: imageUrl, sky_type: "dusk" }),
      "replace_sky_behind_house",
    );
  });

  it("/generate_designs (legacy, multipart): info.images[] of {uuid, data}", async () => {
    const form = new FormData();
    form.append("input_image", new Blob([IMAGE], { type: "image/jpeg" }), "input_image.jpg");
    for (const [k, v] of Object.entries({ room_type: "kitchen", design_style: "modern", num_images: "1" }))
      form.append(k, v);
    expectLike(await post("/generate_designs", form), "generate_designs");
  });

  it("/upscale_image: info.upscaled_image", async () => {
    const form = new FormData();
    form.append("input_image", new Blob([IMAGE], { type: "image/jpeg" }), "input_image.jpg");
    form.append("scale_factor", "2");
    const got = await post("/upscale_image", form);
    expect(shape(got)).toEqual(shape(fixtures.upscale_image!.answer));
  });

  it("a refusal has the sample's shape: a non-empty error and a message, no info", async () => {
    const got = await post("/generate_designs_for_room", {
      input_image_url: imageUrl,
      room_type: "bedroom",
      design_style: "modernglam",
    });
    expect(shape(got)).toEqual(shape(fixtures.error!.answer));
    expect(got.error).toBe("InvalidInput");
  });
});
