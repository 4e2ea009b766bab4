import { encodeBase64 } from "@oslojs/encoding";
import { makeJpeg } from "@test/fixtures/images";
import { vi } from "vitest";
import { workerFetch } from "./worker";

// The AI provider as the Worker sees it in workerd tests: stubbed at the
// isolate's fetch for http://provider.test (PROVIDER_BASE_URL in
// vitest.config.ts; PROVIDER_TIMEOUT_MS is 1.5 s there). Like the real
// provider it fetches the signed input address it is given, so a test can see
// the bytes each call started from, answers each endpoint in its documented
// shape (staging and removal results as addresses it serves, the sky inline),
// and counts its own calls in flight: concurrency is observed where the
// provider sees it, not in our code. Enlargements (/upscale_image, asked for
// because its small images are below listing size) are listed apart, in
// `upscales`, so `calls` holds the calls a job is made of.

export interface ProviderCall {
  /** Order of arrival, from 1. */
  n: number;
  path: string;
  /** The Authorization header it came with. */
  authorization: string | null;
  body: Record<string, unknown>;
  /** The uploaded image, or the bytes behind input_image_url, fetched as the provider would. */
  input: Uint8Array | null;
  /** The status our signed input address answered the provider's fetch with (absent for an upload). */
  inputStatus?: number;
  /** The images answered (empty for a failure). */
  output: Uint8Array[];
  /** The bytes behind design_style_image_url (a style reference), fetched as the provider would; null for none. */
  reference: Uint8Array | null;
  /** A removal's mask_image_url, fetched as the provider would: its status and bytes (undefined when none was sent). */
  mask?: { status: number; type: string | null; bytes: Uint8Array };
}

export interface ProviderStub {
  calls: ProviderCall[];
  /** The /upscale_image calls, in order. */
  upscales: ProviderCall[];
  inFlight: number;
  maxInFlight: number;
  /** Milliseconds each call takes before it answers (after fetching its input). */
  latencyMs: number;
  /** Every n-th call (counted from the last reset) answers 500; 0 for none. */
  failEvery: number;
  /** At most this many images per staging answer, whatever num_images asked (null: as asked). */
  maxImages: number | null;
  /** Held before answering, per call (for ordering tests); resolves at once when unset. */
  hold: ((call: ProviderCall) => Promise<void>) | null;
  /**
   * The images a call answers, chosen by the test (real room photos for the structure check); null or unset answers
   * distinct small JPEGs, as many as asked.
   */
  answer: ((call: ProviderCall) => Uint8Array[] | null) | null;
  /**
   * Answers a call itself, after its inputs were fetched, its hold and its latency (an answer that breaks the
   * adapter, a call that hangs until it is aborted); null, or unset, leaves the answer to the stub.
   */
  respond: ((call: ProviderCall, request: Request) => Promise<Response | null> | Response | null) | null;
  /** What an enlargement answers (null: a larger image than it was given, as the provider's does). */
  upscaleAnswer: Uint8Array | null;
  /** Restarts failEvery's count and maxInFlight. */
  reset(): void;
}

let counter = 0;

/** A distinct small JPEG per answered image, so a test can follow bytes from one call to the next. */
function distinctImage(): Uint8Array {
  counter++;
  return makeJpeg(48 + (counter % 40), 36, 80, 24, counter);
}

/** What a test's other services answer at the isolate's fetch (null: the real fetch), beside the provider. */
export type OtherServices = (request: Request) => Promise<Response | null> | Response | null;

/**
 * The provider stubbed at the isolate's fetch, the one way a test stubs it. `others` answers the test's other
 * outside services (mail, a webhook receiver, DNS, the error sink) through the same fetch.
 */
export function stubProvider(others?: OtherServices): ProviderStub {
  const realFetch = globalThis.fetch;
  let sinceReset = 0;
  const files = new Map<string, Uint8Array>();
  const stub: ProviderStub = {
    calls: [],
    upscales: [],
    inFlight: 0,
    maxInFlight: 0,
    latencyMs: 0,
    failEvery: 0,
    maxImages: null,
    hold: null,
    answer: null,
    respond: null,
    upscaleAnswer: null,
    reset() {
      sinceReset = 0;
      stub.maxInFlight = stub.inFlight;
    },
  };
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (!req.url.startsWith("http://provider.test/")) return (await others?.(req)) ?? realFetch(input, init);
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path.startsWith("/files/")) {
      const bytes = files.get(path);
      return bytes
        ? new Response(bytes.slice(), { headers: { "Content-Type": "image/jpeg" } })
        : new Response(null, { status: 404 });
    }
    // JSON with an input address, or multipart with the uploaded image (the legacy fallback, the enlargement).
    let uploaded: Uint8Array | null = null;
    let body: Record<string, unknown>;
    if (req.headers.get("Content-Type")?.includes("multipart/form-data")) {
      body = {};
      for (const [k, v] of await req.formData()) {
        if (typeof v !== "string") uploaded = new Uint8Array(await v.arrayBuffer());
        else body[k] = k === "num_images" || k === "seed" ? Number(v) : v;
      }
    } else body = (await req.json()) as Record<string, unknown>;
    const upscale = path === "/upscale_image";
    if (!upscale) sinceReset++;
    const list = upscale ? stub.upscales : stub.calls;
    const call: ProviderCall = {
      n: list.length + 1,
      path,
      authorization: req.headers.get("Authorization"),
      body,
      input: uploaded,
      output: [],
      reference: null,
    };
    list.push(call);
    stub.inFlight++;
    stub.maxInFlight = Math.max(stub.maxInFlight, stub.inFlight);
    try {
      const fail = stub.failEvery > 0 && sinceReset % stub.failEvery === 0;
      if (typeof body.input_image_url === "string") {
        const src = await workerFetch(body.input_image_url);
        call.inputStatus = src.status;
        call.input = src.ok ? new Uint8Array(await src.arrayBuffer()) : null;
      }
      if (typeof body.design_style_image_url === "string") {
        const ref = await workerFetch(body.design_style_image_url);
        call.reference = ref.ok ? new Uint8Array(await ref.arrayBuffer()) : null;
      }
      if (typeof body.mask_image_url === "string") {
        const m = await workerFetch(body.mask_image_url);
        call.mask = {
          status: m.status,
          type: m.headers.get("Content-Type"),
          bytes: new Uint8Array(await m.arrayBuffer()),
        };
      }
      if (upscale) {
        // A larger image than it was given, as the provider's enlargement answers: its upscaled_image, base64.
        call.output = [stub.upscaleAnswer ?? makeJpeg(96, 72, 80, 24, ++counter)];
        return Response.json({ error: "", message: "", info: { upscaled_image: encodeBase64(call.output[0]!) } });
      }
      if (stub.hold) await stub.hold(call);
      if (stub.latencyMs > 0) await new Promise((r) => setTimeout(r, stub.latencyMs));
      if (fail) return new Response("provider exploded", { status: 500, statusText: "Internal Server Error" });
      const own = await stub.respond?.(call, req);
      if (own) return own;
      const asked = typeof body.num_images === "number" ? body.num_images : 1;
      const count = stub.maxImages === null ? asked : Math.min(asked, stub.maxImages);
      call.output = stub.answer?.(call) ?? Array.from({ length: count }, distinctImage);
      const address = (bytes: Uint8Array) => {
        const file = `/files/${++counter}.jpg`;
        files.set(file, bytes);
        return { uuid: file, url: `http://provider.test${file}`, width: 48, height: 36 };
      };
      if (path === "/remove_objects_from_room")
        return Response.json({ error: "", message: "", info: { image: address(call.output[0]!) } });
      if (path === "/generate_designs_for_room")
        return Response.json({ error: "", message: "", info: { images: call.output.map(address) } });
      return Response.json({
        error: "",
        message: "",
        info: { images: call.output.map((b) => ({ data: encodeBase64(b) })) },
      });
    } finally {
      stub.inFlight--;
    }
  });
  return stub;
}
