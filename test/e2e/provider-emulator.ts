import { expect, inject } from "vitest";

// The provider emulator's control routes, for the e2e tests that steer it (emulators/provider.ts): its mode
// (ok, a failure, drift, a latency) and the log of the calls it answered.

const base = () => `http://127.0.0.1:${inject("ports").provider}`;

/** Sets the emulator's mode: a name ("ok", "fail500", "drift", ...) or the whole body (latency, times, ...). */
export async function setProviderMode(
  mode: string | Record<string, unknown>,
): Promise<{ calls: number; maxInFlight: number }> {
  const res = await fetch(`${base()}/_emulator/mode`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(typeof mode === "string" ? { mode } : mode),
  });
  expect(res.ok).toBe(true);
  return (await res.json()) as { calls: number; maxInFlight: number };
}

/** The calls the emulator answered (the last 200), oldest first: path, fields sent, `at` (epoch ms). */
export async function providerRequests(): Promise<Record<string, unknown>[]> {
  return (await (await fetch(`${base()}/_emulator/requests`)).json()) as Record<string, unknown>[];
}
