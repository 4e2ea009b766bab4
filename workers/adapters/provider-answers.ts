import { decodeBase64Strict } from "@workers/lib/base64";

// How the provider hands back images, endpoint by endpoint, as its own
// repository documents them (immex-tech/decor8ai-sdk; the fixtures in
// test/contract/fixtures/provider/ are transcribed from those samples and
// replayed through the adapter by test/contract/provider-answers.test.ts):
//
//   /generate_designs_for_room   info.images[] = { uuid, url, width, height }  (a URL to download)
//   /generate_designs (legacy)   info.images[] = { uuid, data }                (base64)
//   /replace_sky_behind_house    info.images[] = { uuid, data } or { uuid, url }
//   /remove_objects_from_room    info.image    = { uuid, width, height, url }  (one object, not a list)
//   /upscale_image               info.upscaled_image = base64
//   /replace_sky (old client)    info.output_image = base64                    (fallback only)

/** One image of an answer: inline bytes (base64) or an address on the provider's file host. */
export type AnswerImage = { data: string } | { url: string };

/** Every image an answer's `info` carries, in the documented order; empty when it has none. */
export function answerImages(info: unknown): AnswerImage[] {
  if (typeof info !== "object" || info === null) return [];
  const { images, image, upscaled_image, output_image } = info as Record<string, unknown>;
  const out: AnswerImage[] = [];
  if (Array.isArray(images)) for (const item of images) pushItem(out, item);
  pushItem(out, image);
  if (typeof upscaled_image === "string" && upscaled_image.length > 0) out.push({ data: upscaled_image });
  if (out.length === 0 && typeof output_image === "string" && output_image.length > 0) out.push({ data: output_image });
  return out;
}

function pushItem(out: AnswerImage[], item: unknown): void {
  if (typeof item !== "object" || item === null) return;
  const { data, url } = item as { data?: unknown; url?: unknown };
  if (typeof data === "string" && data.length > 0) out.push({ data });
  else if (typeof url === "string" && url.length > 0) out.push({ url });
}

/** A base64 image (with or without a data: prefix), or null when it is not base64 or too short to be an image. */
export function decodeAnswerImage(b64: string): Uint8Array | null {
  try {
    const bytes = decodeBase64Strict(b64.replace(/^data:image\/\w+;base64,/, ""));
    return bytes.length < 4 ? null : bytes;
  } catch {
    return null;
  }
}

/**
 * Whether `address` may be downloaded as a result of the provider at `base`: on the provider's own registrable
 * domain (its files live on prod-files.decor8.ai while it answers on api.decor8.ai), https (or http when the
 * provider itself is http, as the local emulator is), no credentials in the address. A provider named by an IP
 * address or a single label (the local emulator) has no domain: only its own host and port.
 */
export function isProviderAddress(address: string, base: string): boolean {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return false;
  }
  const own = new URL(base);
  const literal = /^[\d.]+$|^\[/.test(own.hostname) || !own.hostname.includes(".");
  const domain = own.hostname.split(".").slice(-2).join(".");
  const sameDomain = literal
    ? url.host === own.host
    : url.hostname === own.hostname || url.hostname === domain || url.hostname.endsWith(`.${domain}`);
  const scheme = url.protocol === "https:" || (url.protocol === "http:" && own.protocol === "http:");
  return sameDomain && scheme && !url.username && !url.password;
}
