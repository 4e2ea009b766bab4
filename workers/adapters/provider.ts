import { decodeBase64Strict } from "@workers/lib/base64";

// The AI image provider (shared spec provider-api.md). The key is a server-side
// secret; the browser never talks to the provider. Locally PROVIDER_BASE_URL
// points at emulators/provider.ts, which speaks the same contract.

export type ProviderOperation = "stage" | "sky" | "removal";

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

export interface StageInput {
  /** A signed address of our stored source the provider fetches (workers/lib/signed-urls.ts). */
  imageUrl: string;
  /**
   * The source's bytes: when given, they are uploaded with the call (multipart /generate_designs) and the
   * address is sent only if the provider answers that endpoint with 404.
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
  keepOriginalFloor?: boolean;
  prompt?: string;
}

export interface ProviderClient {
  /** The first result of a staging call. */
  stage(input: StageInput, signal?: AbortSignal): Promise<Uint8Array>;
  /** Every result of a staging call (up to numImages; at least one, or it throws). */
  stageMany(input: StageInput, signal?: AbortSignal): Promise<Uint8Array[]>;
  replaceSky(input: { imageUrl: string; skyType: string }, signal?: AbortSignal): Promise<Uint8Array>;
  removeFurniture(input: { imageUrl: string }, signal?: AbortSignal): Promise<Uint8Array>;
}

/**
 * The endpoints the provider's current official SDK (npm decor8ai 2.0.1) calls,
 * and the older ones of our spec, tried only when the current one answers 404.
 * docs/decisions/0141-provider-endpoints-follow-the-sdk.md; staging uploads the
 * bytes when it has them: docs/decisions/0143-staging-uploads-the-source.md
 */
export const PROVIDER_PATHS = {
  /** Staging with the source's bytes (the SDK's generateDesigns), tried first when we have the bytes. */
  stage: "/generate_designs",
  /** Staging with a signed address of the source (the SDK's generateDesignsForRoom), on a 404 of the upload. */
  stageByUrl: "/generate_designs_for_room",
  sky: "/replace_sky_behind_house",
  skyFallback: "/replace_sky",
  removal: "/remove_objects_from_room",
} as const;

/** The provider answered 404 for an endpoint: it does not have it (the fallback may). */
class EndpointMissing extends Error {}

const FAILURE_PREFIX: Record<ProviderOperation, string> = {
  stage: "Failed to process image",
  sky: "Failed to replace sky",
  removal: "Failed to remove furniture",
};
const EMPTY_MESSAGE: Record<ProviderOperation, string> = {
  stage: "Invalid API response: No processed images received.",
  sky: "Invalid API response: No replaced sky image returned.",
  removal: "Invalid API response: No processed images received.",
};

export const DEFAULT_PROVIDER_TIMEOUT_MS = 120_000;
/** A result given as an address must arrive within this long, and be at most this large. */
export const RESULT_DOWNLOAD_TIMEOUT_MS = 30_000;
export const MAX_RESULT_BYTES = 30 * 1024 * 1024;

interface ImageItem {
  data?: unknown;
  url?: unknown;
}

export function createProviderClient(
  env: Pick<Env, "PROVIDER_BASE_URL" | "PROVIDER_API_KEY">,
  opts: { fetcher?: typeof fetch; timeoutMs?: number; downloadTimeoutMs?: number } = {},
): ProviderClient {
  const fetcher = opts.fetcher ?? fetch;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  const downloadTimeoutMs = opts.downloadTimeoutMs ?? RESULT_DOWNLOAD_TIMEOUT_MS;
  const base = (env.PROVIDER_BASE_URL ?? "https://api.decor8.ai").replace(/\/$/, "");

  async function call(
    op: ProviderOperation,
    path: string,
    body: BodyInit,
    headers: HeadersInit,
    signal?: AbortSignal,
    opts404 = false,
  ) {
    if (!env.PROVIDER_API_KEY)
      throw new ProviderError(`${FAILURE_PREFIX[op]}: the provider key is not configured`, false);
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await fetcher(`${base}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${env.PROVIDER_API_KEY}`, ...headers },
        body,
        signal: combined,
      });
    } catch (err) {
      if (timeout.aborted) {
        throw new ProviderError(
          `${FAILURE_PREFIX[op]}: the provider did not answer within ${timeoutMs / 1000} s`,
          true,
        );
      }
      throw new ProviderError(`${FAILURE_PREFIX[op]}: ${err instanceof Error ? err.message : "network error"}`, true);
    }
    if (res.status === 404 && opts404) {
      await res.body?.cancel();
      throw new EndpointMissing(path);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: ${res.status} - ${res.statusText || "Error"}`,
        res.status === 429 || res.status >= 500,
      );
    }
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      throw new ProviderError(`Invalid API response: the provider did not send JSON.`, true);
    }
    if (typeof json !== "object" || json === null)
      throw new ProviderError("Invalid API response: unexpected body.", true);
    const { error, message } = json as { error?: unknown; message?: unknown };
    if (typeof error === "string" && error.length > 0) {
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: ${typeof message === "string" && message ? message : error}`,
        false,
      );
    }
    return (json as { info?: { images?: unknown; output_image?: unknown } }).info;
  }

  /** Every image of an answer, in order (each decoded or downloaded); at least one. */
  async function allImages(
    op: ProviderOperation,
    info: { images?: unknown; output_image?: unknown } | undefined,
    signal?: AbortSignal,
  ): Promise<Uint8Array[]> {
    const images = Array.isArray(info?.images) ? (info.images as ImageItem[]) : [];
    if (images.length <= 1) return [await firstImage(op, info, signal)];
    const out: Uint8Array[] = [];
    for (const item of images) {
      if (typeof item?.data === "string" && item.data.length > 0) out.push(decodeImage(op, item.data));
      else if (typeof item?.url === "string") out.push(await download(op, item.url, signal));
    }
    if (out.length === 0) throw new ProviderError(EMPTY_MESSAGE[op], true);
    return out;
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

  async function stageMany(input: StageInput, signal?: AbortSignal): Promise<Uint8Array[]> {
    const numImages = Math.min(4, Math.max(1, Math.trunc(input.numImages ?? 1)));
    const byUrl = async (opts404: boolean) => {
      const payload: Record<string, unknown> = {
        input_image_url: input.imageUrl,
        room_type: input.roomType,
        design_style: input.designStyle,
        num_images: numImages,
      };
      if (input.colorScheme) payload.color_scheme = input.colorScheme;
      if (input.specialityDecor) payload.speciality_decor = input.specialityDecor;
      if (input.keepOriginalFloor) payload.keep_original_floor = true;
      if (input.prompt) payload.prompt = input.prompt;
      if (input.seed !== undefined) payload.seed = input.seed;
      const info = await call(
        "stage",
        PROVIDER_PATHS.stageByUrl,
        JSON.stringify(payload),
        { "Content-Type": "application/json" },
        signal,
        opts404,
      );
      return allImages("stage", info, signal);
    };
    const upload = async (source: { bytes: Uint8Array; contentType: string }) => {
      // The fields and their order as the SDK's generateDesigns sends them.
      const form = new FormData();
      const fileName = source.contentType === "image/png" ? "photo.png" : "photo.jpg";
      form.append("input_image", new Blob([source.bytes as BlobPart], { type: source.contentType }), fileName);
      form.append("room_type", input.roomType);
      form.append("design_style", input.designStyle);
      form.append("num_images", String(numImages));
      if (input.colorScheme) form.append("color_scheme", input.colorScheme);
      if (input.specialityDecor) form.append("speciality_decor", input.specialityDecor);
      if (input.keepOriginalFloor) form.append("keep_original_floor", "true");
      if (input.prompt) form.append("prompt", input.prompt);
      if (input.seed !== undefined) form.append("seed", String(input.seed));
      const info = await call("stage", PROVIDER_PATHS.stage, form, {}, signal, true);
      return allImages("stage", info, signal);
    };
    // With the bytes at hand they go with the call (one request); a provider without the upload endpoint
    // (404) gets the address instead. docs/decisions/0143-staging-uploads-the-source.md
    if (!input.image) return byUrl(false);
    const source = await input.image();
    try {
      return await upload(source);
    } catch (err) {
      if (err instanceof EndpointMissing) return byUrl(false);
      throw err;
    }
  }

  async function firstImage(
    op: ProviderOperation,
    info: { images?: unknown; output_image?: unknown } | undefined,
    signal?: AbortSignal,
  ) {
    if (typeof info?.output_image === "string" && info.output_image.length > 0)
      return decodeImage(op, info.output_image);
    const images = Array.isArray(info?.images) ? (info.images as ImageItem[]) : [];
    const item = images[0];
    if (!item) throw new ProviderError(EMPTY_MESSAGE[op], true);
    if (typeof item.data === "string" && item.data.length > 0) return decodeImage(op, item.data);
    if (typeof item.url === "string") return download(op, item.url, signal);
    throw new ProviderError(EMPTY_MESSAGE[op], true);
  }

  /**
   * A result the provider hands over as an address: fetched only from the
   * provider's own domain (https, or http when the provider itself is http, as
   * the local emulator is), with its own timeout and a size cap, never
   * following a redirect elsewhere.
   */
  async function download(op: ProviderOperation, address: string, signal?: AbortSignal): Promise<Uint8Array> {
    const refused = new ProviderError(
      `${EMPTY_MESSAGE[op].replace(/\.$/, "")} (the image address is not the provider's).`,
      false,
    );
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw refused;
    }
    const own = new URL(base);
    // A provider named by an IP address or a single label (the local emulator) has no domain: only its own host and port.
    const literal = /^[\d.]+$|^\[/.test(own.hostname) || !own.hostname.includes(".");
    const domain = own.hostname.split(".").slice(-2).join(".");
    const sameDomain = literal
      ? url.host === own.host
      : url.hostname === own.hostname || url.hostname === domain || url.hostname.endsWith(`.${domain}`);
    const scheme = url.protocol === "https:" || (url.protocol === "http:" && own.protocol === "http:");
    if (!sameDomain || !scheme || url.username || url.password) throw refused;
    const timeout = AbortSignal.timeout(downloadTimeoutMs);
    let res: Response;
    try {
      res = await fetcher(url.toString(), {
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: "manual",
      });
    } catch (err) {
      const why = timeout.aborted
        ? "the image did not arrive in time"
        : err instanceof Error
          ? err.message
          : "network error";
      throw new ProviderError(`${FAILURE_PREFIX[op]}: ${why}`, true);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw refused;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ProviderError(`${FAILURE_PREFIX[op]}: ${res.status} - ${res.statusText || "Error"}`, true);
    }
    const declared = Number(res.headers.get("Content-Length") ?? "0");
    const tooLarge = new ProviderError(
      `${FAILURE_PREFIX[op]}: the image is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MB`,
      false,
    );
    if (declared > MAX_RESULT_BYTES) {
      await res.body?.cancel();
      throw tooLarge;
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = res.body?.getReader();
    try {
      for (;;) {
        const next = await reader?.read();
        if (!next || next.done) break;
        total += next.value.byteLength;
        if (total > MAX_RESULT_BYTES) {
          await reader?.cancel();
          throw tooLarge;
        }
        chunks.push(next.value);
      }
    } catch (err) {
      if (err === tooLarge) throw err;
      throw new ProviderError(
        `${FAILURE_PREFIX[op]}: ${timeout.aborted ? "the image did not arrive in time" : "the download broke off"}`,
        true,
      );
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return bytes;
  }

  function decodeImage(op: ProviderOperation, b64: string): Uint8Array {
    try {
      const bytes = decodeBase64Strict(b64.replace(/^data:image\/\w+;base64,/, ""));
      if (bytes.length < 4) throw new Error("too short");
      return bytes;
    } catch {
      throw new ProviderError(`${EMPTY_MESSAGE[op].replace(/\.$/, "")} (the image could not be decoded).`, true);
    }
  }

  return {
    async stage(input, signal) {
      return (await stageMany(input, signal))[0]!;
    },
    stageMany,
    async replaceSky(input, signal) {
      const body = JSON.stringify({ input_image_url: input.imageUrl, sky_type: input.skyType });
      const json = { "Content-Type": "application/json" };
      const info = await withFallback(
        () => call("sky", PROVIDER_PATHS.sky, body, json, signal, true),
        () => call("sky", PROVIDER_PATHS.skyFallback, body, json, signal),
      );
      return firstImage("sky", info, signal);
    },
    async removeFurniture(input, signal) {
      const body = JSON.stringify({ input_image_url: input.imageUrl });
      const info = await call("removal", PROVIDER_PATHS.removal, body, { "Content-Type": "application/json" }, signal);
      return firstImage("removal", info, signal);
    },
  };
}
