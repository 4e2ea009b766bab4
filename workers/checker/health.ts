import { encode } from "fast-png";
import { imagesFor } from "../lib/images";
import { log } from "../lib/log";
import type { JudgeEnv } from "./judge";

// The check Worker's half of the deep health probe: the Images binding reduces a picture, as it does for every check.

/** A 32 x 24 gray gradient as a PNG: small, but an image the binding must decode and reduce. */
function probePicture(): Uint8Array {
  const width = 32;
  const height = 24;
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = (x * 8 + y * 4) % 256;
  return encode({ width, height, data, channels: 1, depth: 8 });
}

export async function probeImages(env: Pick<JudgeEnv, "IMAGES" | "APP_ENV">): Promise<"ok" | "error"> {
  try {
    const gray = await imagesFor(env).analysisGray(probePicture(), 16);
    return gray.width === 16 && gray.height === 12 ? "ok" : "error";
  } catch (err) {
    log.warn(`health: the Images binding failed: ${err instanceof Error ? err.message : String(err)}`);
    return "error";
  }
}
