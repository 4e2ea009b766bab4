import { readCapped } from "./capped-body";
import { type AnswerImage, answerImages, decodeAnswerImage, isProviderAddress } from "./provider-answers";

// The AI image provider (Decor8 AI; shared spec provider-api.md, which follows
// the provider's own repository). The key is a server-side secret; the browser
// never talks to the provider. Locally PROVIDER_BASE_URL points at
// emulators/provider.ts, which speaks the same contract.
// docs/decisions/0151-provider-as-documented.md

export type ProviderOperation = "stage" | "sky" | "removal" | "upscale";

/** Why a provider call failed, as the operations page counts it. */
export type ProviderFailure =
  | "timeout"
  | "network"
  | "rate_limited"
  | "server_error"
  | "refused"
  | "bad_answer"
  | "other";

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly failure: ProviderFailure = "other",
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

/** One call to the provider as it ended: for the log line and the operations page's counters. */
export interface ProviderCallRecord {
  op: ProviderOperation;
  ms: number;
  /** null when the call answered a success. */
  failure: ProviderFailure | null;
}

export interface StageInput {
  /** A signed address of our stored source the provider fetches (workers/lib/signed-urls.ts). */
  imageUrl: string;
  /**
   * The source's bytes, read only if the provider answers the documented JSON call with 404 and the legacy
   * multipart call is tried instead. Without them there is no fallback: that call is never sent without its file.
   */
  image?: () => Promise<{ bytes: Uint8Array; contentType: string }>;
  roomType: string;
  designStyle: string;
  /** Variations: how many results one call asks for (the provider's num_images, 1-4). */
  numImages?: number;
  /** The provider's seed; a re-roll sends a new one. */
  seed?: number;
  /** Advanced customization, as the provider's codes; left out when not asked for. */
  colorScheme?: string;
  specialityDecor?: string;
  /** A whole generation directive (the provider lets it override room type and style). */
  prompt?: string;
  /** How far the result may depart from the photo, 0-1 (the provider's default 0.39 when left out). */
  designCreativity?: number;
  /** The provider's output resolution multiplier, 1-8. */
  scaleFactor?: number;
  /** A style reference image (one look across a listing) and how strongly to follow it, 0-1. */
  styleReference?: { url: string; strength: number };
}

export interface ProviderClient {
  /** The first result of a staging call. */
  stage(input: StageInput, signal?: AbortSignal): Promise<Uint8Array>;
  /** Every result of a staging call (up to numImages; at least one, or it throws). */
  stageMany(input: StageInput, signal?: AbortSignal): Promise<Uint8Array[]>;
  replaceSky(input: { imageUrl: string; skyType: string }, signal?: AbortSignal): Promise<Uint8Array>;
  /** Empties the room, or only the areas a mask (white = remove) marks. */
  removeFurniture(input: { imageUrl: string; maskUrl?: string }, signal?: AbortSignal): Promise<Uint8Array>;
  /** A larger copy of an image of at most 1024 px on its long edge (the provider's limit). */
  upscale(
    input: { bytes: Uint8Array; contentType: string; scaleFactor: number },
    signal?: AbortSignal,
  ): Promise<Uint8Array>;
}

/**
 * The endpoints the product calls (the provider's SDK names in brackets), and the two older ones, each tried only
 * when the documented endpoint answers 404.
 */
export const PROVIDER_PATHS = {
  /** Staging with a signed address of the source (generateDesignsForRoom): the documented call. */
  stage: "/generate_designs_for_room",
  /** The legacy multipart staging call (generateDesigns), with the file only, on a 404 of the documented call. */
  stageLegacy: "/generate_designs",
  sky: "/replace_sky_behind_house",
  skyFallback: "/replace_sky",
  removal: "/remove_objects_from_room",
  upscale: "/upscale_image",
} as const;

/** The provider answered 404 for an endpoint: it does not have it (the fallback may). */
class EndpointMissing extends Error {}

const FAILURE_PREFIX: Record<ProviderOperation, string> = {
  stage: "Failed to process image",
  sky: "Failed to replace sky",
  removal: "Failed to remove furniture",
  upscale: "Failed to enlarge the image",
};
const EMPTY_MESSAGE: Record<ProviderOperation, string> = {
  stage: "Invalid API response: No processed images received.",
  sky: "Invalid API response: No replaced sky image returned.",
  removal: "Invalid API response: No processed images received.",
  upscale: "Invalid API response: No enlarged image returned.",
};

export const DEFAULT_PROVIDER_TIMEOUT_MS = 120_000;
/** A result given as an address must arrive within this long, and be at most this large. */
export const RESULT_DOWNLOAD_TIMEOUT_MS = 30_000;
export const MAX_RESULT_BYTES = 30 * 1024 * 1024;

const JSON_HEADERS = { "Content-Type": "application/json" };

/** What the adapter needs of the environment (the Worker's Env, or a script's process.env). */
export interface ProviderConfig {
  PROVIDER_BASE_URL?: string;
  PROVIDER_API_KEY?: string;
}

export function createProviderClient(
  env: ProviderConfig,
  opts: {
    fetcher?: typeof fetch;
    timeoutMs?: number;
    downloadTimeoutMs?: number;
    /** Told of every call as it ends (its time and, when it failed, why). */
    onCall?: (call: ProviderCallRecord) => void;
  } = {},
): ProviderClient {
  const fetcher = opts.fetcher ?? fetch;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  const downloadTimeoutMs = opts.downloadTimeoutMs ?? RESULT_DOWNLOAD_TIMEOUT_MS;
  const base = (env.PROVIDER_BASE_URL ?? "https://api.decor8.ai").replace(/\/$/, "");

  /** One POST, timed and told to `onCall` as it ends. */
  async function call(...args: Parameters<typeof callOnce>): Promise<unknown> {
    const started = Date.now();
    const told = (failure: ProviderFailure | null) => opts.onCall?.({ op: args[0], ms: Date.now() - started, failure });
    try {
      const info = await callOnce(...args);
      told(null);
      return info;
    } catch (err) {
      if (!(err instanceof EndpointMissing)) told(err instanceof ProviderError ? err.failure : "other");
      throw err;
    }
  }

  /** One POST; its `info` when the answer is a success, a ProviderError (or EndpointMissing) otherwise. */
  async function callOnce(
    op: ProviderOperation,
    path: string,
    body: BodyInit,
    headers: HeadersInit,
    signal: AbortSignal | undefined,
    missingMayFallBack = false,
  ): Promise<unknown> {
    if (!env.PROVIDER_API_KEY)
      throw new ProviderError(`${FAILURE_PREFIX[op]}: the provider key is not configured`, false);
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetcher(`${base}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${env.PROVIDER_API_KEY}`, ...headers },
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (timeout.aborted) {
        throw new ProviderError(
          `${FAILURE_PREFIX[op]}: the provider did not answer within ${timeoutMs / 1000} s`,
          true,
          "timeout",
        );
      }
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: ${err instanceof Error ? err.message : "network error"}`,
        true,
        "network",
      );
    }
    if (res.status === 404 && missingMayFallBack) {
      await res.body?.cancel();
      throw new EndpointMissing(path);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: ${res.status} - ${res.statusText || "Error"}`,
        res.status === 429 || res.status >= 500,
        res.status === 429 ? "rate_limited" : res.status >= 500 ? "server_error" : "refused",
      );
    }
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw new ProviderError("Invalid API response: the provider did not send JSON.", true, "bad_answer");
    }
    if (typeof json !== "object" || json === null)
      throw new ProviderError("Invalid API response: unexpected body.", true, "bad_answer");
    // A failure is a 200 whose `error` is not empty (e.g. {"error":"InvalidInput","message":"Invalid input image..."}).
    const { error, message, info } = json as { error?: unknown; message?: unknown; info?: unknown };
    if (typeof error === "string" && error.length > 0) {
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: ${typeof message === "string" && message ? message : error}`,
        false,
        "refused",
      );
    }
    return info;
  }

  /** The current endpoint; on 404 only, the older one (a provider that has not moved yet). */
  async function withFallback<T>(current: () => Promise<T>, older: () => Promise<T>): Promise<T> {
    try {
      return await current();
    } catch (err) {
      if (err instanceof EndpointMissing) return older();
      throw err;
    }
  }

  /** Every image of an answer, decoded or downloaded, in order; at least one or a ProviderError. */
  async function images(op: ProviderOperation, info: unknown, signal?: AbortSignal): Promise<Uint8Array[]> {
    const items = answerImages(info);
    if (items.length === 0) throw new ProviderError(EMPTY_MESSAGE[op], true);
    const out: Uint8Array[] = [];
    for (const item of items) out.push(await bytesOf(op, item, signal));
    return out;
  }

  async function bytesOf(op: ProviderOperation, item: AnswerImage, signal?: AbortSignal): Promise<Uint8Array> {
    if ("url" in item) return download(op, item.url, signal);
    const bytes = decodeAnswerImage(item.data);
    if (!bytes) {
      throw new ProviderError(`${EMPTY_MESSAGE[op].replace(/\.$/, "")} (the image could not be decoded).`, true);
    }
    return bytes;
  }

  function multipartImage(form: FormData, source: { bytes: Uint8Array; contentType: string }, op: ProviderOperation) {
    // Never a multipart call without its file: the legacy staging call invents a room when the file is missing.
    if (source.bytes.byteLength === 0)
      throw new ProviderError(`${FAILURE_PREFIX[op]}: the source image is empty`, false);
    const name = source.contentType === "image/png" ? "input_image.png" : "input_image.jpg";
    form.append("input_image", new Blob([source.bytes as BlobPart], { type: source.contentType }), name);
  }

  async function stageMany(input: StageInput, signal?: AbortSignal): Promise<Uint8Array[]> {
    const numImages = Math.min(4, Math.max(1, Math.trunc(input.numImages ?? 1)));
    // The optional fields, in the order and with the names the SDK's generateDesignsForRoom sends them.
    const fields: Record<string, string | number> = {};
    if (input.scaleFactor !== undefined) fields.scale_factor = input.scaleFactor;
    if (input.colorScheme) fields.color_scheme = input.colorScheme;
    if (input.specialityDecor) fields.speciality_decor = input.specialityDecor;
    if (input.prompt) fields.prompt = input.prompt;
    if (input.seed !== undefined) fields.seed = input.seed;
    if (input.styleReference) {
      fields.design_style_image_url = input.styleReference.url;
      fields.design_style_image_strength = input.styleReference.strength;
    }
    if (input.designCreativity !== undefined) fields.design_creativity = input.designCreativity;
    const required = { room_type: input.roomType, design_style: input.designStyle, num_images: numImages };
    const byAddress = async () => {
      const payload = { input_image_url: input.imageUrl, ...required, ...fields };
      const info = await call(
        "stage",
        PROVIDER_PATHS.stage,
        JSON.stringify(payload),
        JSON_HEADERS,
        signal,
        !!input.image,
      );
      return images("stage", info, signal);
    };
    const legacy = async () => {
      const form = new FormData();
      multipartImage(form, await input.image!(), "stage");
      for (const [k, v] of Object.entries({ ...required, ...fields })) form.append(k, String(v));
      return images("stage", await call("stage", PROVIDER_PATHS.stageLegacy, form, {}, signal), signal);
    };
    return input.image ? withFallback(byAddress, legacy) : byAddress();
  }

  /**
   * A result the provider hands over as an address: fetched only from the provider's own domain
   * (isProviderAddress), with its own timeout and a size cap, never following a redirect elsewhere.
   */
  async function download(op: ProviderOperation, address: string, signal?: AbortSignal): Promise<Uint8Array> {
    // Made only when thrown: an Error captures its stack when made, a cost every download paid twice.
    const refused = () =>
      new ProviderError(`${EMPTY_MESSAGE[op].replace(/\.$/, "")} (the image address is not the provider's).`, false);
    if (!isProviderAddress(address, base)) throw refused();
    const timeout = AbortSignal.timeout(downloadTimeoutMs);
    let res: Response | undefined;
    // A download is a plain GET of a finished result: a connection lost before any answer is tried once more.
    for (let attempt = 1; !res; attempt++) {
      try {
        res = await fetcher(address, {
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          redirect: "manual",
        });
      } catch (err) {
        if (attempt < 2 && !timeout.aborted && !signal?.aborted) continue;
        const why = timeout.aborted
          ? "the image did not arrive in time"
          : err instanceof Error
            ? err.message
            : "network error";
        throw new ProviderError(`${FAILURE_PREFIX[op]}: ${why}`, true);
      }
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw refused();
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ProviderError(`${FAILURE_PREFIX[op]}: ${res.status} - ${res.statusText || "Error"}`, true);
    }
    const body = await readCapped(res, MAX_RESULT_BYTES);
    if (body.ok) return body.bytes;
    if (body.why === "too-large") {
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: the image is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MB`,
        false,
      );
    }
    const why = timeout.aborted ? "the image did not arrive in time" : "the download broke off";
    throw new ProviderError(`${FAILURE_PREFIX[op]}: ${why}`, true);
  }

  return {
    async stage(input, signal) {
      return (await stageMany(input, signal))[0]!;
    },
    stageMany,
    async replaceSky(input, signal) {
      const body = JSON.stringify({ input_image_url: input.imageUrl, sky_type: input.skyType });
      const info = await withFallback(
        () => call("sky", PROVIDER_PATHS.sky, body, JSON_HEADERS, signal, true),
        () => call("sky", PROVIDER_PATHS.skyFallback, body, JSON_HEADERS, signal),
      );
      return (await images("sky", info, signal))[0]!;
    },
    async removeFurniture(input, signal) {
      const payload: Record<string, string> = { input_image_url: input.imageUrl };
      if (input.maskUrl) payload.mask_image_url = input.maskUrl;
      const info = await call("removal", PROVIDER_PATHS.removal, JSON.stringify(payload), JSON_HEADERS, signal);
      return (await images("removal", info, signal))[0]!;
    },
    async upscale(input, signal) {
      const form = new FormData();
      multipartImage(form, input, "upscale");
      form.append("scale_factor", String(input.scaleFactor));
      return (await images("upscale", await call("upscale", PROVIDER_PATHS.upscale, form, {}, signal), signal))[0]!;
    },
  };
}
