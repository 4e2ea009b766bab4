import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProviderEmulator } from "../../emulators/provider.ts";

// ADR 0320: the emulator draws a result once per distinct call (its input's bytes and every option its drawing reads)
// and answers a repeated call with the same bytes at a new address, so its image work stops competing with ours for
// this machine's CPU when a bench stages one photo many times. What it answers must be what drawing would give.

const KEY = "renders-key";
const PHOTO = readFileSync(join(import.meta.dirname, "../fixtures/structure/photos/living-room.jpg"));
const OTHER = readFileSync(join(import.meta.dirname, "../fixtures/structure/photos/office.jpg"));
let emulator: Server;
let photos: Server;
let base = "";
let photoHost = "";

beforeAll(async () => {
  emulator = await startProviderEmulator({ port: 0, apiKey: KEY });
  base = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`;
  // Every address is a new one (as our signed addresses are); /other serves a different picture.
  photos = createServer((req, res) =>
    res.writeHead(200, { "Content-Type": "image/jpeg" }).end(req.url?.startsWith("/other") ? OTHER : PHOTO),
  );
  await new Promise<void>((resolve) => photos.listen(0, "127.0.0.1", resolve));
  photoHost = `http://127.0.0.1:${(photos.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => emulator?.close(r));
  await new Promise((r) => photos?.close(r));
});

let n = 0;
async function stage(body: Record<string, unknown>, picture = "room"): Promise<{ url: string; bytes: Buffer }[]> {
  const res = await fetch(`${base}/generate_designs_for_room`, {
    method: "POST",
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: JSON.stringify({ input_image_url: `${photoHost}/${picture}-${++n}.jpg`, ...body }),
  });
  const answer = (await res.json()) as { info: { images: { url: string }[] } };
  return Promise.all(
    answer.info.images.map(async ({ url }) => ({ url, bytes: Buffer.from(await (await fetch(url)).arrayBuffer()) })),
  );
}

async function counts(): Promise<{ rendered: number; reused: number }> {
  return (await (await fetch(`${base}/_emulator/mode`)).json()) as { rendered: number; reused: number };
}

describe("the provider emulator's drawn results", () => {
  it("answers a repeated call with the bytes it drew, at a new address, and draws every different call", async () => {
    const call = { room_type: "livingroom", design_style: "modern", num_images: 1, scale_factor: 3 };
    const before = await counts();
    const [first] = await stage(call);
    const [again] = await stage(call);
    expect(again!.url).not.toBe(first!.url);
    expect(again!.bytes.equals(first!.bytes)).toBe(true);
    const after = await counts();
    expect(after.rendered - before.rendered).toBe(1);
    expect(after.reused - before.reused).toBe(1);

    // A different style, seed or picture is drawn anew, and differs.
    const [style] = await stage({ ...call, design_style: "scandinavian" });
    const [seeded] = await stage({ ...call, seed: 7 });
    const [other] = await stage(call, "other");
    for (const r of [style!, seeded!, other!]) expect(r.bytes.equals(first!.bytes)).toBe(false);
    expect((await counts()).rendered - after.rendered).toBe(3);
  });

  it("draws each variation of one call on its own", async () => {
    const results = await stage({ room_type: "bedroom", design_style: "modern", num_images: 2, scale_factor: 1 });
    expect(results).toHaveLength(2);
    expect(results[0]!.bytes.equals(results[1]!.bytes)).toBe(false);
  });
});
