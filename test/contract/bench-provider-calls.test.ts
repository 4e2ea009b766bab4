import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerCallsDuring } from "../../bench/results.ts";
import { startProviderEmulator } from "../../emulators/provider.ts";

// Issue 44: the full bench reported "provider calls per job: 0" and a NaN fetch time for every result kind, which
// the results module alone measured as 1/2/2 calls. The emulator's request log keeps its last 200 calls; the module
// counted a job's calls by the log's length, which stops growing at 200 once earlier modules made that many.

const KEY = "bench-key";
let emulator: Server;
let base = "";

/** A call the emulator logs and answers at once (a sky call without its input: refused after it is logged). */
async function cheapCall(): Promise<void> {
  const res = await fetch(`${base}/replace_sky_behind_house`, {
    method: "POST",
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: JSON.stringify({ sky_type: "dusk" }),
  });
  await res.arrayBuffer();
}

beforeAll(async () => {
  emulator = await startProviderEmulator({ port: 0, apiKey: KEY });
  base = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => emulator?.close(r));
});

describe("the bench's count of a job's provider calls", () => {
  it("counts the calls made during the work after the emulator has logged more than 200", async () => {
    for (let i = 0; i < 205; i++) await cheapCall();
    const two = await providerCallsDuring(base, async () => {
      await cheapCall();
      await cheapCall();
      return "done";
    });
    expect(two.result).toBe("done");
    expect(two.made).toBe(2);
    expect(two.entries).toHaveLength(2);
    const none = await providerCallsDuring(base, async () => undefined);
    expect(none.made).toBe(0);
    expect(none.entries).toEqual([]);
  });
});
