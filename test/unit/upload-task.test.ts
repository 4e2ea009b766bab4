import { describe, expect, it, vi } from "vitest";
import { type UploadOptions, type UploadState, UploadTask } from "~/lib/upload-task";
import type { Transport, TransportRequest } from "~/lib/upload-transport";

// The browser's upload task against an in-memory stand-in for /api/uploads.

const CHUNK = 10;

function fakeServer(size: number) {
  const stored = new Set<number>();
  let thumb = false;
  let completed = false;
  const log: string[] = [];
  const count = Math.ceil(size / CHUNK);
  let fail: ((req: TransportRequest) => number | "hang" | null) | null = null;

  const transport: Transport = {
    async send(req) {
      const path = req.url.replace(/^\/api\/uploads\/?/, "");
      log.push(`${req.method} ${path}`);
      const injected = fail?.(req) ?? null;
      if (injected === "hang") {
        return new Promise((_, reject) => {
          req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
        });
      }
      if (injected !== null) return { status: injected, body: injected === 0 ? null : { error: "Refused by test." } };
      if (req.method === "POST" && path === "")
        return { status: 201, body: { id: "u1", chunkSize: CHUNK, chunkCount: count } };
      if (req.method === "GET")
        return { status: 200, body: { status: completed ? "completed" : "open", received: [...stored], thumb } };
      if (req.method === "PUT" && path === "u1/thumb") {
        thumb = true;
        return { status: 200, body: {} };
      }
      const chunk = /^u1\/chunks\/(\d+)$/.exec(path);
      if (req.method === "PUT" && chunk) {
        req.onProgress?.((req.body as Blob).size);
        stored.add(Number(chunk[1]));
        return { status: 200, body: {} };
      }
      if (req.method === "POST" && path === "u1/complete") {
        if (completed) return { status: 201, body: { photo: { id: "p1" } } };
        const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !stored.has(i));
        if (missing.length || !thumb) return { status: 409, body: { error: "missing", missing } };
        completed = true;
        return { status: 201, body: { photo: { id: "p1" } } };
      }
      if (req.method === "DELETE") {
        stored.clear();
        return { status: 200, body: { status: "aborted" } };
      }
      return { status: 404, body: { error: "Not found." } };
    },
  };
  return {
    transport,
    log,
    stored,
    failWith(fn: typeof fail) {
      fail = fn;
    },
    /** Completion happened, its answer lost (the tab went away). */
    markCompleted() {
      completed = true;
      stored.clear();
    },
  };
}

function makeTask(
  server: ReturnType<typeof fakeServer>,
  size: number,
  sleeps: number[] = [],
  extra: UploadOptions = {},
) {
  const photo = new Blob([new Uint8Array(size)], { type: "image/jpeg" });
  const thumb = new Blob([new Uint8Array(3)], { type: "image/jpeg" });
  let clock = 0;
  return new UploadTask<{ id: string }>({ photo, thumb, name: "room.jpg", type: "image/jpeg" }, server.transport, {
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    now: () => clock,
    retryWindowMs: 60_000,
    ...extra,
  });
}

function until<P>(task: UploadTask<P>, states: UploadState[]): Promise<UploadState> {
  return new Promise((resolve) => {
    const check = () => {
      const s = task.snapshot().state;
      if (states.includes(s)) {
        off();
        resolve(s);
      }
    };
    const off = task.subscribe(check);
    check();
  });
}

describe("UploadTask", () => {
  it("declares, sends the thumbnail and every chunk once, completes, and reports progress", async () => {
    const server = fakeServer(35);
    const task = makeTask(server, 35);
    const progress: number[] = [];
    task.subscribe((s) => progress.push(s.sentBytes));
    task.start();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(task.snapshot()).toMatchObject({ photo: { id: "p1" }, sentBytes: 35, totalBytes: 35, error: null });
    expect(server.log).toEqual([
      "POST ",
      "PUT u1/thumb",
      "PUT u1/chunks/0",
      "PUT u1/chunks/1",
      "PUT u1/chunks/2",
      "PUT u1/chunks/3",
      "POST u1/complete",
    ]);
    expect(progress.at(-1)).toBe(35);
    expect(progress.every((p, i) => i === 0 || p >= progress[i - 1]!)).toBe(true);
  });

  it("pauses mid-chunk and resumes from what the server has, sending nothing twice that had arrived", async () => {
    const server = fakeServer(40);
    const task = makeTask(server, 40);
    server.failWith((req) => (req.url.endsWith("/chunks/2") ? "hang" : null));
    task.start();
    await vi.waitFor(() => expect(server.log).toContain("PUT u1/chunks/2"));
    expect(task.pause()).toBe(true);
    expect(await until(task, ["paused"])).toBe("paused");
    expect(task.pause()).toBe(false);
    expect(task.snapshot().sentBytes).toBe(20);

    server.failWith(null);
    server.log.length = 0;
    expect(task.resume()).toBe(true);
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(server.log).toEqual(["GET u1", "PUT u1/chunks/2", "PUT u1/chunks/3", "POST u1/complete"]);
  });

  it("retries network failures with a doubling backoff, then succeeds", async () => {
    const server = fakeServer(10);
    const sleeps: number[] = [];
    const task = makeTask(server, 10, sleeps);
    let failures = 3;
    server.failWith((req) => (req.url.endsWith("/chunks/0") && failures-- > 0 ? 0 : null));
    task.start();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(sleeps).toEqual([1000, 2000, 4000]);
  });

  it("gives up after the retry window with a message, and Try again carries on", async () => {
    const server = fakeServer(10);
    const task = makeTask(server, 10);
    server.failWith((req) => (req.url.endsWith("/chunks/0") ? 503 : null));
    task.start();
    expect(await until(task, ["success", "error"])).toBe("error");
    expect(task.snapshot().error).toMatch(/could not reach our servers/);
    server.failWith(null);
    expect(task.retry()).toBe(true);
    expect(await until(task, ["success", "error"])).toBe("success");
  });

  it("stops at once on a refusal and shows the server's message", async () => {
    const server = fakeServer(10);
    const task = makeTask(server, 10);
    server.failWith((req) => (req.url.endsWith("/chunks/0") ? 415 : null));
    task.start();
    expect(await until(task, ["success", "error"])).toBe("error");
    expect(task.snapshot().error).toBe("Refused by test.");
    expect(server.log.filter((l) => l.endsWith("chunks/0"))).toHaveLength(1);
  });

  it("sends again what completion says is missing", async () => {
    const server = fakeServer(30);
    const task = makeTask(server, 30);
    let dropped = false;
    server.failWith((req) => {
      // The server loses chunk 1 after accepting it (e.g. it expired).
      if (req.url.endsWith("/complete") && !dropped) {
        dropped = true;
        server.stored.delete(1);
      }
      return null;
    });
    task.start();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(server.log.filter((l) => l === "PUT u1/chunks/1")).toHaveLength(2);
  });

  it("cancels from running, pausing or paused and deletes on the server; not from a finished state", async () => {
    const server = fakeServer(40);
    const task = makeTask(server, 40);
    server.failWith((req) => (req.url.endsWith("/chunks/1") ? "hang" : null));
    task.start();
    await vi.waitFor(() => expect(server.log).toContain("PUT u1/chunks/1"));
    task.pause();
    await until(task, ["paused"]);
    expect(task.cancel()).toBe(true);
    expect(await until(task, ["canceled"])).toBe("canceled");
    expect(server.log.at(-1)).toBe("DELETE u1");
    expect(server.stored.size).toBe(0);
    expect(task.cancel()).toBe(false);
    expect(task.resume()).toBe(false);

    const done = makeTask(fakeServer(5), 5);
    done.start();
    await until(done, ["success"]);
    expect(done.cancel()).toBe(false);
    expect(done.pause()).toBe(false);
  });

  it("carries on a session kept from before a reload: no new declaration, only the chunks the server lacks", async () => {
    const server = fakeServer(40);
    server.stored.add(0);
    server.stored.add(1);
    const sessions: unknown[] = [];
    const task = makeTask(server, 40, [], {
      session: { id: "u1", chunkSize: CHUNK, chunkCount: 4 },
      onSession: (s) => sessions.push(s),
    });
    expect(task.uploadId).toBe("u1");
    task.start();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(server.log).toEqual(["GET u1", "PUT u1/thumb", "PUT u1/chunks/2", "PUT u1/chunks/3", "POST u1/complete"]);
    expect(sessions).toEqual([]);
  });

  it("reports the declared session once, so the browser can keep it", async () => {
    const server = fakeServer(15);
    const sessions: unknown[] = [];
    const task = makeTask(server, 15, [], { onSession: (s) => sessions.push(s) });
    task.start();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(sessions).toEqual([{ id: "u1", chunkSize: CHUNK, chunkCount: 2 }]);
  });

  it("asks for the photo again, sending no chunk, when the upload completed before the reload", async () => {
    const server = fakeServer(20);
    server.markCompleted();
    const task = makeTask(server, 20, [], { session: { id: "u1", chunkSize: CHUNK, chunkCount: 2 } });
    task.start();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(server.log).toEqual(["GET u1", "POST u1/complete"]);
    expect(task.snapshot().photo).toEqual({ id: "p1" });
  });

  it("stops with a message when the server no longer has the kept upload", async () => {
    const server = fakeServer(20);
    server.failWith((req) => (req.method === "GET" ? 404 : null));
    const task = makeTask(server, 20, [], { session: { id: "u1", chunkSize: CHUNK, chunkCount: 2 } });
    task.start();
    expect(await until(task, ["success", "error"])).toBe("error");
    expect(server.log).toEqual(["GET u1"]);
  });

  it("waits for the network while offline, saying so, without spending the retry window", async () => {
    const server = fakeServer(20);
    const sleeps: number[] = [];
    let offline = true;
    let wake: () => void = () => undefined;
    const waited: boolean[] = [];
    const task = makeTask(server, 20, sleeps, {
      retryWindowMs: 1,
      network: {
        reachable: async () => !offline,
        waitOnline: () => new Promise<void>((r) => (wake = r)),
      },
    });
    server.failWith((req) => (offline && req.url.endsWith("/chunks/1") ? 0 : null));
    task.subscribe((s) => waited.push(s.waitingForNetwork));
    task.start();
    await vi.waitFor(() => expect(task.snapshot().waitingForNetwork).toBe(true));
    expect(task.snapshot()).toMatchObject({ state: "running", retrying: false, sentBytes: 10 });
    offline = false;
    wake();
    expect(await until(task, ["success", "error"])).toBe("success");
    expect(task.snapshot().waitingForNetwork).toBe(false);
    expect(sleeps).toEqual([]);
    expect(server.log.filter((l) => l === "PUT u1/chunks/1")).toHaveLength(2);
  });
});
