import type { GrayImage } from "./images";
import { isOriginalKey } from "./photo-storage";

// A source photo's analysis gray, reduced once and kept beside its original
// (docs/decisions/0322-source-reduced-beside-the-provider-call.md): the check Worker reduces a job's source while
// the provider works on it, so only the result is reduced after the provider answers. A copy names the etag of the
// bytes it was reduced from and is used only for those bytes. Only originals get one, so a copy goes when its
// photo's prefix does.

/** What a copy's bytes begin with: a tag, then width and height (16 bits each, little-endian), then the pixels. */
const MAGIC = [0x53, 0x47, 0x52, 0x31]; // "SGR1"
const HEADER = 8;

/** Where the copy of `sourceKey`'s gray is kept: beside an original only; null for any other key. */
export function sourceGrayKey(sourceKey: string): string | null {
  return isOriginalKey(sourceKey) ? `${sourceKey}.gray` : null;
}

export function encodeGray(gray: GrayImage): Uint8Array {
  const out = new Uint8Array(HEADER + gray.data.length);
  out.set(MAGIC, 0);
  const view = new DataView(out.buffer);
  view.setUint16(4, gray.width, true);
  view.setUint16(6, gray.height, true);
  out.set(gray.data, HEADER);
  return out;
}

/** The gray a copy holds; null when the bytes are not one (wrong tag, or a length that does not match its size). */
export function decodeGray(bytes: Uint8Array): GrayImage | null {
  if (bytes.length < HEADER || MAGIC.some((b, i) => bytes[i] !== b)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const width = view.getUint16(4, true);
  const height = view.getUint16(6, true);
  if (width === 0 || height === 0 || bytes.length !== HEADER + width * height) return null;
  return { width, height, data: bytes.subarray(HEADER) };
}

/** The custom metadata a copy carries: the etag of the original it was reduced from. */
interface GrayMetadata {
  sourceEtag: string;
}

/**
 * The kept gray of the original `sourceKey`, with the etag of the bytes it was reduced from (the caller holds it
 * against the original's own); null when there is none or it is not a gray.
 */
export async function keptGray(
  bucket: R2Bucket,
  sourceKey: string,
): Promise<{ gray: GrayImage; sourceEtag: string } | null> {
  const key = sourceGrayKey(sourceKey);
  const object = key ? await bucket.get(key) : null;
  if (!object) return null;
  const sourceEtag = (object.customMetadata as Partial<GrayMetadata> | undefined)?.sourceEtag;
  const gray = decodeGray(new Uint8Array(await object.arrayBuffer()));
  return gray && sourceEtag ? { gray, sourceEtag } : null;
}

/** Keeps `gray` as the copy of the original `sourceKey` (etag `sourceEtag`); false when that key gets none. */
export async function keepGray(
  bucket: R2Bucket,
  sourceKey: string,
  sourceEtag: string,
  gray: GrayImage,
): Promise<boolean> {
  const key = sourceGrayKey(sourceKey);
  if (!key) return false;
  const metadata: GrayMetadata = { sourceEtag };
  await bucket.put(key, encodeGray(gray), {
    httpMetadata: { contentType: "application/octet-stream" },
    customMetadata: { ...metadata },
  });
  return true;
}
