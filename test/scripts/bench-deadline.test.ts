import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { withFetchDeadline, withinDeadline } from "../../bench/deadline.ts";

// A request or a run that never answers must fail the bench's run (so it is tried again), not hold it for minutes.

let server: Server;
let url = "";
beforeAll(async () => {
  // Answers /fast at once and never answers anything else.
  server = createServer((req, res) => {
    if (req.url === "/fast") res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test("a request that never answers is aborted at the deadline; one that answers is untouched", async () => {
  const guarded = withFetchDeadline(fetch, 300);
  expect(await (await guarded(`${url}/fast`)).text()).toBe("ok");
  const started = Date.now();
  await expect(guarded(`${url}/never`)).rejects.toThrow(/timeout|aborted/i);
  expect(Date.now() - started).toBeLessThan(5_000);
});

test("a caller's own signal is kept rather than replaced", async () => {
  const guarded = withFetchDeadline(fetch, 60_000);
  const own = new AbortController();
  const pending = guarded(`${url}/never`, { signal: own.signal });
  own.abort(new Error("the caller's own abort"));
  await expect(pending).rejects.toThrow("the caller's own abort");
});

test("a run past its deadline rejects naming it; one within it gives its result", async () => {
  expect(await withinDeadline(Promise.resolve(7), 1_000, "run 1")).toBe(7);
  await expect(withinDeadline(new Promise(() => {}), 50, "run 2")).rejects.toThrow(
    "run 2 did not finish within 0.05 s",
  );
});
