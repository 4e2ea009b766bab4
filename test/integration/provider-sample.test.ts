import { env } from "cloudflare:workers";
import { makeJpeg } from "@test/fixtures/images";
import { workerFetch } from "@test/support/worker";
import { describe, expect, it } from "vitest";

// The provider smoke check's sample (scripts/provider-smoke.ts, docs/decisions/0151-provider-as-documented.md):
// stored behind the deep probe's guard, served only through its signed address.

const put = (body: BodyInit, headers: Record<string, string> = {}) =>
  workerFetch("/api/health/provider-sample", {
    method: "PUT",
    body,
    headers: { Origin: "http://localhost", ...headers },
  });

describe("PUT /api/health/provider-sample", () => {
  it("stores a JPEG once by its digest and answers a signed address that serves its bytes to anyone holding it", async () => {
    const photo = makeJpeg(120, 90, 85);
    const first = await put(photo);
    expect(first.status).toBe(201);
    const { name, imageUrl } = (await first.json()) as { name: string; imageUrl: string };
    expect(name).toMatch(/^[0-9a-f]{64}\.jpg$/);
    const again = (await (await put(photo)).json()) as { name: string };
    expect(again.name).toBe(name);
    expect((await env.PHOTOS.list({ prefix: "health/provider-sample/" })).objects.map((o) => o.key)).toEqual([
      `health/provider-sample/${name}`,
    ]);

    const served = await workerFetch(imageUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get("Content-Type")).toBe("image/jpeg");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(photo);

    // Another digest under the same signature, a changed signature, an expired one: refused.
    const url = new URL(imageUrl);
    const other = new URL(imageUrl.replace(name, `${"0".repeat(64)}.jpg`));
    const sig = url.searchParams.get("sig")!;
    const forged = new URL(imageUrl);
    forged.searchParams.set("sig", `${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`);
    const expired = new URL(imageUrl);
    expired.searchParams.set("exp", String(Date.now() - 1000));
    for (const u of [other, forged, expired, new URL(url.pathname, url.origin)]) {
      expect((await workerFetch(u.toString())).status, u.toString()).toBe(403);
    }
  });

  it("refuses what is not a whole JPEG or PNG, or is larger than an upload, storing nothing", async () => {
    const stored = async () => (await env.PHOTOS.list({ prefix: "health/provider-sample/" })).objects.map((o) => o.key);
    const before = await stored();
    const jpeg = makeJpeg(40, 30);
    for (const body of [
      new Uint8Array([1, 2, 3]),
      jpeg.subarray(0, jpeg.length - 20),
      new TextEncoder().encode("<svg/>"),
    ]) {
      const res = await put(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false, code: "invalid" });
    }
    const big = await put(new Uint8Array(10 * 1024 * 1024 + 1));
    expect(big.status).toBe(413);
    expect(await stored()).toEqual(before);
  });
});
