import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { encode as encodePng } from "fast-png";
import { stagingDirective } from "../app/shared/staging-options.ts";
import { createProviderClient, type ProviderClient, type StageInput } from "../workers/adapters/provider.ts";
import { describeImage } from "../workers/lib/thumbnail.ts";

// `npm run provider:smoke -- --origin https://<deployed host>`: tells an operator whether the real provider agrees
// with our adapter. One real call per endpoint the product uses and per optional field it sends, on the provider's
// own test photo (scripts/provider-smoke/README.md), uploaded to the deployed environment and sent as its signed
// address (the provider must be able to fetch it). For each call it prints the shape of the answer, the image's
// size, the time, and whether the adapter read it. Each call may cost a provider credit. Never part of `npm test`.
// docs/decisions/0151-provider-as-documented.md

const USAGE = `Usage: PROVIDER_API_KEY=… [PROVIDER_BASE_URL=…] [HEALTH_PROBE_SECRET=…] \\
  npm run provider:smoke -- --origin https://<deployed host> [--only stage,sky,removal,upscale,legacy]`;

const { values } = parseArgs({
  options: { origin: { type: "string" }, only: { type: "string" }, help: { type: "boolean" } },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const key = process.env.PROVIDER_API_KEY;
if (!key) {
  console.error(
    "PROVIDER_API_KEY is not set. The smoke check makes real calls to the AI provider with the production key\n" +
      "(each may cost a provider credit); set it in this shell, never in a file.\n\n" +
      USAGE,
  );
  process.exit(2);
}
if (!values.origin) {
  console.error(
    `--origin is missing: the deployed environment whose signed addresses the provider fetches.\n\n${USAGE}`,
  );
  process.exit(2);
}
const origin = values.origin.replace(/\/$/, "");
const base = (process.env.PROVIDER_BASE_URL ?? "https://api.decor8.ai").replace(/\/$/, "");
const only = values.only?.split(",").map((s) => s.trim());

const here = new URL("./provider-smoke/", import.meta.url);
const room = new Uint8Array(readFileSync(new URL("room.jpg", here)));
const room768 = new Uint8Array(readFileSync(new URL("room-768.jpg", here)));

/** A mask of the sample's size: white (remove) over the lower left quarter, black elsewhere. */
function mask(): Uint8Array {
  const { width, height } = describeImage(room);
  const data = new Uint8Array(width * height);
  for (let y = Math.floor(height / 2); y < height; y++) data.fill(255, y * width, y * width + Math.floor(width / 2));
  return encodePng({ width, height, data, channels: 1, depth: 8 });
}

/** Stores an image on the deployed environment and returns its signed address. */
async function upload(bytes: Uint8Array, type: string): Promise<string> {
  const headers: Record<string, string> = { "Content-Type": type };
  if (process.env.HEALTH_PROBE_SECRET) headers["X-Health-Probe"] = process.env.HEALTH_PROBE_SECRET;
  const res = await fetch(`${origin}/api/health/provider-sample`, {
    method: "PUT",
    headers,
    body: new Blob([bytes as BlobPart]),
  });
  if (res.status !== 201) {
    console.error(`${origin} refused the sample (${res.status}): ${await res.text()}`);
    if (res.status === 403) console.error("Set HEALTH_PROBE_SECRET to the deployed environment's probe secret.");
    process.exit(2);
  }
  return ((await res.json()) as { imageUrl: string }).imageUrl;
}

/** What the provider's answers looked like, e.g. `info.images[1]{height,url,uuid,width}`. */
function shapeOf(json: unknown): string {
  if (typeof json !== "object" || json === null) return "not a JSON object";
  const { error, info } = json as { error?: unknown; info?: Record<string, unknown> };
  if (typeof error === "string" && error) return `error "${error}"`;
  if (!info || typeof info !== "object") return "no info";
  const keys = (v: unknown) => (v && typeof v === "object" ? `{${Object.keys(v).sort().join(",")}}` : typeof v);
  return Object.entries(info)
    .map(([k, v]) =>
      Array.isArray(v)
        ? `info.${k}[${v.length}]${keys(v[0])}`
        : typeof v === "string"
          ? `info.${k}(base64)`
          : `info.${k}${keys(v)}`,
    )
    .join(" ");
}

let lastShape = "";
const recording = (async (url: RequestInfo | URL, init?: RequestInit) => {
  const res = await fetch(url, init);
  if (init?.method === "POST") {
    lastShape = res.ok
      ? shapeOf(
          await res
            .clone()
            .json()
            .catch(() => null),
        )
      : `HTTP ${res.status}`;
  }
  return res;
}) as typeof fetch;
/** The legacy multipart call is reached only after a 404 of the documented one: answered here, not sent. */
const legacyOnly = (async (url: RequestInfo | URL, init?: RequestInit) =>
  String(url).endsWith("/generate_designs_for_room")
    ? new Response("", { status: 404 })
    : recording(url, init)) as typeof fetch;

const env = { PROVIDER_BASE_URL: base, PROVIDER_API_KEY: key };
const client = createProviderClient(env, { fetcher: recording });

console.log(`Provider ${base}, samples stored on ${origin}`);
const imageUrl = await upload(room, "image/jpeg");
const maskUrl = await upload(mask(), "image/png");
const stage: StageInput = { imageUrl, roomType: "livingroom", designStyle: "modern" };

const CALLS: { group: string; name: string; run: (c: ProviderClient) => Promise<Uint8Array | Uint8Array[]> }[] = [
  { group: "stage", name: "staging, no optional field", run: (c) => c.stageMany(stage) },
  { group: "stage", name: "+ scale_factor 3", run: (c) => c.stageMany({ ...stage, scaleFactor: 3 }) },
  { group: "stage", name: "+ color_scheme", run: (c) => c.stageMany({ ...stage, colorScheme: "COLOR_SCHEME_8" }) },
  {
    group: "stage",
    name: "+ speciality_decor",
    run: (c) => c.stageMany({ ...stage, specialityDecor: "SPECIALITY_DECOR_2" }),
  },
  {
    group: "stage",
    name: "+ prompt",
    run: (c) =>
      c.stageMany({ ...stage, prompt: stagingDirective("livingroom", "modern", "A reading chair by the window") }),
  },
  { group: "stage", name: "+ seed", run: (c) => c.stageMany({ ...stage, seed: 4242 }) },
  { group: "stage", name: "+ design_creativity", run: (c) => c.stageMany({ ...stage, designCreativity: 0.15 }) },
  { group: "stage", name: "+ num_images 2", run: (c) => c.stageMany({ ...stage, numImages: 2 }) },
  {
    group: "stage",
    name: "+ design_style_image_url",
    run: (c) => c.stageMany({ ...stage, styleReference: { url: imageUrl, strength: 0.6 } }),
  },
  {
    group: "legacy",
    name: "legacy multipart /generate_designs (the 404 fallback)",
    run: () =>
      createProviderClient(env, { fetcher: legacyOnly }).stageMany({
        ...stage,
        image: async () => ({ bytes: room, contentType: "image/jpeg" }),
      }),
  },
  { group: "sky", name: "sky replacement", run: (c) => c.replaceSky({ imageUrl, skyType: "dusk" }) },
  { group: "removal", name: "furniture removal", run: (c) => c.removeFurniture({ imageUrl }) },
  { group: "removal", name: "+ mask_image_url", run: (c) => c.removeFurniture({ imageUrl, maskUrl }) },
  {
    group: "upscale",
    name: "upscale x3 of a 768 px image",
    run: (c) => c.upscale({ bytes: room768, contentType: "image/jpeg", scaleFactor: 3 }),
  },
];

let failed = 0;
for (const call of CALLS.filter((c) => !only || only.includes(c.group))) {
  lastShape = "no answer";
  const started = performance.now();
  let line: string;
  try {
    const out = await call.run(client);
    const images = Array.isArray(out) ? out : [out];
    const sizes = images.map((b) => {
      const { width, height } = describeImage(b);
      const listing = Math.max(width, height) >= 2048 ? "" : " (below 2048 px)";
      return `${width}x${height} ${Math.round(b.byteLength / 1024)} KB${listing}`;
    });
    line = `ok    ${sizes.join(", ")}  read by the adapter`;
  } catch (err) {
    failed++;
    line = `FAIL  not read: ${err instanceof Error ? err.message : String(err)}`;
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`${call.name.padEnd(52)} ${seconds.padStart(6)} s  ${lastShape}\n      ${line}`);
}
console.log(
  failed === 0
    ? "\nEvery call was read by the adapter."
    : `\n${failed} call(s) not read: see docs/decisions/0151-provider-as-documented.md ("When the smoke check disagrees").`,
);
process.exit(failed === 0 ? 0 : 1);
