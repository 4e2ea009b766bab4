import { encodeBase64 } from "@oslojs/encoding";
import { createProviderClient, ProviderError } from "@workers/adapters/provider";
import { describe, expect, it } from "vitest";

const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4]);
const env = { PROVIDER_BASE_URL: "http://provider.test", PROVIDER_API_KEY: "secret-key" };

function client(
  respond: (req: Request) => Response | Promise<Response>,
  timeoutMs = 1000,
  base: string = env.PROVIDER_BASE_URL,
) {
  const seen: Request[] = [];
  const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req);
    return respond(req);
  }) as typeof fetch;
  const api = createProviderClient({ ...env, PROVIDER_BASE_URL: base }, { fetcher, timeoutMs, downloadTimeoutMs: 200 });
  return { api, seen };
}

const stageInput = {
  imageUrl: "http://app.test/signed/original",
  image: async () => ({ bytes: JPEG, contentType: "image/jpeg" }),
  roomType: "bedroom",
  designStyle: "scandinavian",
};

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProviderError) return err;
    throw err;
  }
  throw new Error("expected a ProviderError");
}

describe("provider adapter", () => {
  it("stages through the documented JSON call with the signed source address, the bearer key and the choices", async () => {
    const { api, seen } = client(() => Response.json({ info: { images: [{ data: encodeBase64(JPEG) }] } }));
    const out = await api.stage({
      ...stageInput,
      seed: 99,
      colorScheme: "COLOR_SCHEME_3",
      prompt: "calm",
      scaleFactor: 3,
      designCreativity: 0.2,
      styleReference: { url: "http://app.test/signed/reference", strength: 0.6 },
    });
    expect(out).toEqual(JPEG);
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req.url).toBe("http://provider.test/generate_designs_for_room");
    expect(req.headers.get("Authorization")).toBe("Bearer secret-key");
    expect(await req.json()).toEqual({
      input_image_url: "http://app.test/signed/original",
      room_type: "bedroom",
      design_style: "scandinavian",
      num_images: 1,
      seed: 99,
      color_scheme: "COLOR_SCHEME_3",
      prompt: "calm",
      scale_factor: 3,
      design_creativity: 0.2,
      design_style_image_url: "http://app.test/signed/reference",
      design_style_image_strength: 0.6,
    });
  });

  it("uploads the bytes to the legacy multipart call only when the documented one answers 404", async () => {
    const { api, seen } = client((req) =>
      req.url.endsWith("/generate_designs_for_room")
        ? new Response("no such endpoint", { status: 404, statusText: "Not Found" })
        : Response.json({ info: { images: [{ data: encodeBase64(JPEG) }] } }),
    );
    expect(await api.stage({ ...stageInput, seed: 99, colorScheme: "COLOR_SCHEME_3" })).toEqual(JPEG);
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual(["/generate_designs_for_room", "/generate_designs"]);
    const form = await seen[1]!.formData();
    const file = form.get("input_image") as File;
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(JPEG);
    expect(file.type).toBe("image/jpeg");
    expect(Object.fromEntries([...form.entries()].filter(([k]) => k !== "input_image"))).toEqual({
      room_type: "bedroom",
      design_style: "scandinavian",
      num_images: "1",
      seed: "99",
      color_scheme: "COLOR_SCHEME_3",
    });
  });

  it("never sends the legacy multipart call without its file (the provider would invent a room)", async () => {
    const missing = () => new Response("no such endpoint", { status: 404, statusText: "Not Found" });
    const empty = client((req) => (req.url.endsWith("/generate_designs_for_room") ? missing() : Response.json({})));
    const err = await failure(
      empty.api.stage({ ...stageInput, image: async () => ({ bytes: new Uint8Array(), contentType: "image/jpeg" }) }),
    );
    expect(err.message).toBe("Failed to process image: the source image is empty");
    expect(empty.seen.map((r) => new URL(r.url).pathname)).toEqual(["/generate_designs_for_room"]);
    // Without a way to read the bytes, a 404 is the call's failure: no fallback at all.
    const { image: _bytes, ...byAddress } = stageInput;
    const none = client(missing);
    expect((await failure(none.api.stage(byAddress))).message).toBe("Failed to process image: 404 - Not Found");
    expect(none.seen).toHaveLength(1);
  });

  it("asks for variations with num_images and returns every image", async () => {
    const other = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 9, 9, 9, 9]);
    const { api, seen } = client(() =>
      Response.json({ info: { images: [{ data: encodeBase64(JPEG) }, { data: encodeBase64(other) }] } }),
    );
    expect(await api.stageMany({ ...stageInput, numImages: 3 })).toEqual([JPEG, other]);
    expect(((await seen[0]!.json()) as { num_images: number }).num_images).toBe(3);
  });

  it("falls back to the older endpoint only when the documented one answers 404", async () => {
    const { api, seen } = client((req) =>
      req.url.endsWith("/generate_designs_for_room") || req.url.endsWith("/replace_sky_behind_house")
        ? new Response("no such endpoint", { status: 404, statusText: "Not Found" })
        : req.url.endsWith("/replace_sky")
          ? Response.json({ info: { output_image: encodeBase64(JPEG) } })
          : Response.json({ info: { images: [{ data: encodeBase64(JPEG) }] } }),
    );
    expect(await api.stage({ ...stageInput, numImages: 2 })).toEqual(JPEG);
    expect(await api.replaceSky({ imageUrl: "http://app.test/signed", skyType: "day" })).toEqual(JPEG);
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual([
      "/generate_designs_for_room",
      "/generate_designs",
      "/replace_sky_behind_house",
      "/replace_sky",
    ]);
    expect((await seen[1]!.formData()).get("num_images")).toBe("2");
    // A 500 is a failure, never a reason to try the older endpoint.
    const broken = client(() => new Response("x", { status: 500, statusText: "Internal Server Error" }));
    await failure(broken.api.stage(stageInput));
    expect(broken.seen).toHaveLength(1);
  });

  it("accepts an image url instead of data", async () => {
    const { api } = client((req) =>
      req.url.endsWith("/generate_designs_for_room")
        ? Response.json({ info: { images: [{ url: "http://cdn.provider.test/x.jpg" }] } })
        : new Response(JPEG),
    );
    expect(await api.stage(stageInput)).toEqual(JPEG);
  });

  it("reads the sky from info.output_image, or from info.images", async () => {
    const a = client(() => Response.json({ info: { output_image: encodeBase64(JPEG) } }));
    expect(await a.api.replaceSky({ imageUrl: "http://app.test/signed", skyType: "dusk" })).toEqual(JPEG);
    expect(await a.seen[0]!.json()).toEqual({ input_image_url: "http://app.test/signed", sky_type: "dusk" });
    const b = client(() => Response.json({ info: { images: [{ data: encodeBase64(JPEG) }] } }));
    expect(await b.api.replaceSky({ imageUrl: "http://app.test/signed", skyType: "day" })).toEqual(JPEG);
  });

  it("turns HTTP errors into the spec's messages", async () => {
    const e500 = await failure(
      client(() => new Response("x", { status: 500, statusText: "Internal Server Error" })).api.stage(stageInput),
    );
    expect(e500.message).toBe("Failed to process image: 500 - Internal Server Error");
    const e429 = await failure(
      client(() => new Response("x", { status: 429, statusText: "Too Many Requests" })).api.replaceSky({
        imageUrl: "u",
        skyType: "day",
      }),
    );
    expect(e429.message).toBe("Failed to replace sky: 429 - Too Many Requests");
    expect(e429.retryable).toBe(true);
  });

  it("treats a 200 with an error body as a failure", async () => {
    const err = await failure(
      client(() => Response.json({ error: "InvalidInput", message: "Bad image" })).api.stage(stageInput),
    );
    expect(err.message).toBe("Failed to process image: Bad image");
  });

  it("refuses empty and malformed answers", async () => {
    expect((await failure(client(() => Response.json({ info: { images: [] } })).api.stage(stageInput))).message).toBe(
      "Invalid API response: No processed images received.",
    );
    expect(
      (await failure(client(() => Response.json({})).api.replaceSky({ imageUrl: "u", skyType: "night" }))).message,
    ).toBe("Invalid API response: No replaced sky image returned.");
    expect((await failure(client(() => new Response("{not json")).api.stage(stageInput))).message).toMatch(
      /^Invalid API response/,
    );
    expect(
      (
        await failure(
          client(() => Response.json({ info: { images: [{ data: "" }] } })).api.removeFurniture({ imageUrl: "u" }),
        )
      ).message,
    ).toBe("Invalid API response: No processed images received.");
  });

  it("times out a provider that never answers", async () => {
    const { api } = client(
      (req) =>
        new Promise<Response>((_, reject) => {
          req.signal.addEventListener("abort", () => reject(req.signal.reason));
        }),
      50,
    );
    const err = await failure(api.removeFurniture({ imageUrl: "u" }));
    expect(err.message).toBe("Failed to remove furniture: the provider did not answer within 0.05 s");
  });

  it("refuses to call without a key", async () => {
    const api = createProviderClient({ PROVIDER_BASE_URL: "http://provider.test", PROVIDER_API_KEY: "" });
    expect((await failure(api.stage(stageInput))).message).toMatch(/key is not configured/);
  });
});

describe("results the provider hands over as an address", () => {
  const answerWith = (url: string) => (req: Request) =>
    req.url === url ? new Response(JPEG) : Response.json({ info: { images: [{ url }] } });

  it("are fetched from the provider's own domain", async () => {
    const { api, seen } = client(answerWith("http://cdn.provider.test/out/1.jpg"));
    expect(await api.stage(stageInput)).toEqual(JPEG);
    expect(seen.map((r) => r.url)).toEqual([
      "http://provider.test/generate_designs_for_room",
      "http://cdn.provider.test/out/1.jpg",
    ]);
  });

  it("are fetched once more when the connection is lost before an answer, and no more than that", async () => {
    const url = "http://cdn.provider.test/out/2.jpg";
    let lost = 0;
    const flaky = (times: number) =>
      client((req) => {
        if (req.url !== url) return Response.json({ info: { images: [{ url }] } });
        if (lost++ < times) throw new Error("Network connection lost.");
        return new Response(JPEG);
      });
    const once = flaky(1);
    expect(await once.api.stage(stageInput)).toEqual(JPEG);
    expect(once.seen.map((r) => r.url)).toEqual([`http://provider.test/generate_designs_for_room`, url, url]);
    lost = 0;
    const twice = flaky(2);
    expect((await failure(twice.api.stage(stageInput))).message).toBe(
      "Failed to process image: Network connection lost.",
    );
    expect(twice.seen).toHaveLength(3);
  });

  it("are refused from any other host, a non-http scheme or with credentials, without fetching", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data",
      "http://localhost:8787/internal",
      "http://provider.test.evil.example/x.jpg",
      "file:///etc/passwd",
      "http://user:pass@provider.test/x.jpg",
      "not a url",
    ]) {
      const { api, seen } = client(answerWith(url));
      expect((await failure(api.stage(stageInput))).message, url).toMatch(/not the provider's/);
      expect(seen).toHaveLength(1);
    }
  });

  it("are refused when larger than the cap, declared or streamed", async () => {
    const big = new Uint8Array(31 * 1024 * 1024);
    const url = "http://provider.test/out/big.jpg";
    const declared = client((req) =>
      req.url === url
        ? new Response(big, { headers: { "Content-Length": String(big.byteLength) } })
        : Response.json({ info: { images: [{ url }] } }),
    );
    expect((await failure(declared.api.stage(stageInput))).message).toMatch(/larger than 30 MB/);
    const streamed = client((req) =>
      req.url === url
        ? new Response(
            new ReadableStream({
              start(c) {
                for (let i = 0; i < 31; i++) c.enqueue(new Uint8Array(1024 * 1024));
                c.close();
              },
            }),
          )
        : Response.json({ info: { images: [{ url }] } }),
    );
    expect((await failure(streamed.api.stage(stageInput))).message).toMatch(/larger than 30 MB/);
  });
});

describe("results from a provider named by its address (the local emulator)", () => {
  it("come only from its own host and port", async () => {
    const base = "http://127.0.0.1:4101";
    const answer = (url: string) => (req: Request) =>
      req.url === url ? new Response(JPEG) : Response.json({ info: { images: [{ url }] } });
    const ok = client(answer(`${base}/files/1.jpg`), 1000, base);
    expect(await ok.api.stage(stageInput)).toEqual(JPEG);
    for (const url of ["http://10.0.0.1/x.jpg", "http://127.0.0.1:8787/api/dev/seed", "http://0.1/x.jpg"]) {
      const { api, seen } = client(answer(url), 1000, base);
      expect((await failure(api.stage(stageInput))).message, url).toMatch(/not the provider's/);
      expect(seen).toHaveLength(1);
    }
  });
});

describe("a result download that never finishes", () => {
  it("gives up after its own timeout", async () => {
    const url = "http://provider.test/out/slow.jpg";
    const { api } = client((req) =>
      req.url === url
        ? new Promise<Response>((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason)))
        : Response.json({ info: { images: [{ url }] } }),
    );
    const started = Date.now();
    const err = await failure(api.stage(stageInput));
    expect(err.message).toMatch(/did not arrive in time/);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("a result address that redirects", () => {
  it("is refused instead of followed", async () => {
    const url = "http://provider.test/out/moved.jpg";
    const { api, seen } = client((req) =>
      req.url === url
        ? new Response(null, { status: 302, headers: { Location: "http://169.254.169.254/" } })
        : Response.json({ info: { images: [{ url }] } }),
    );
    expect((await failure(api.stage(stageInput))).message).toMatch(/not the provider's/);
    expect(seen.map((r) => r.url)).toEqual(["http://provider.test/generate_designs_for_room", url]);
  });
});
