import { env } from "cloudflare:test";
import { deleteRetrying, PUT_TRIES, putRetrying } from "@workers/lib/stored-retry";
import { describe, expect, it } from "vitest";

// A bucket whose first `failures` writes throw as R2 does under load, then writes to the real local bucket.
function flaky(failures: number) {
  let calls = 0;
  const bucket: Pick<R2Bucket, "put"> = {
    put: (async (key: string, value: ArrayBuffer | ArrayBufferView | string, options?: R2PutOptions) => {
      calls++;
      if (calls <= failures) throw new Error("put: Unspecified error (0)");
      return env.PHOTOS.put(key, value, options);
    }) as R2Bucket["put"],
  };
  return { bucket, calls: () => calls };
}

const noWait = { sleep: async () => undefined };

describe("putRetrying", () => {
  it("stores the bytes when R2 fails the first two writes, and waits longer before each new try", async () => {
    const { bucket, calls } = flaky(2);
    const pauses: number[] = [];
    const stored = await putRetrying(bucket, "retry/two", new Uint8Array([1, 2, 3]), undefined, {
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    expect(stored.size).toBe(3);
    expect(calls()).toBe(3);
    expect(pauses).toEqual([100, 400]);
    const read = await env.PHOTOS.get("retry/two");
    expect(new Uint8Array(await read!.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("writes once when R2 answers at once", async () => {
    const { bucket, calls } = flaky(0);
    await putRetrying(bucket, "retry/none", "x", undefined, noWait);
    expect(calls()).toBe(1);
  });

  it("throws R2's own error after the last try, and stores nothing", async () => {
    const { bucket, calls } = flaky(PUT_TRIES);
    await expect(putRetrying(bucket, "retry/all", "x", undefined, noWait)).rejects.toThrow(/Unspecified error/);
    expect(calls()).toBe(PUT_TRIES);
    expect(await env.PHOTOS.head("retry/all")).toBeNull();
  });

  it("treats a write R2 answers with null as not stored", async () => {
    let calls = 0;
    const bucket = { put: (async () => (calls++ === 0 ? null : ({ size: 1 } as R2Object))) as R2Bucket["put"] };
    const stored = await putRetrying(bucket, "retry/null", "x", undefined, noWait);
    expect(stored.size).toBe(1);
    expect(calls).toBe(2);
  });
});

describe("deleteRetrying", () => {
  it("deletes the keys when R2 refuses the first delete, and throws its error once every try is refused", async () => {
    await env.PHOTOS.put("retry/delete-a", "a");
    await env.PHOTOS.put("retry/delete-b", "b");
    let calls = 0;
    const refusing = (failures: number): Pick<R2Bucket, "delete"> => ({
      delete: async (keys: string | string[]) => {
        calls++;
        if (calls <= failures) throw new Error("delete: Unspecified error (0)");
        return env.PHOTOS.delete(keys);
      },
    });
    await deleteRetrying(refusing(1), ["retry/delete-a", "retry/delete-b"], noWait);
    expect(calls).toBe(2);
    expect(await env.PHOTOS.head("retry/delete-a")).toBeNull();
    expect(await env.PHOTOS.head("retry/delete-b")).toBeNull();
    calls = 0;
    await env.PHOTOS.put("retry/delete-c", "c");
    await expect(deleteRetrying(refusing(PUT_TRIES), ["retry/delete-c"], noWait)).rejects.toThrow(/Unspecified/);
    expect(calls).toBe(PUT_TRIES);
    expect(await env.PHOTOS.head("retry/delete-c")).not.toBeNull();
  });
});
