import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { dataExports, type PhotoVersion, photos, photoVersions } from "@db/schema";
import { paintOver, providerSize } from "@test/fixtures/structure/edit";
import { decodeImage, encodeJpeg } from "@test/fixtures/structure/pixels";
import { ROOMS } from "@test/fixtures/structure/rooms";
import { db } from "@test/support/factories";
import { api, folderOf, onPlan, photosOf, settleJob } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { pathOf, signedAddressOf } from "@test/support/signed";
import { ROOM_SOURCE, refuseOverOne, useRoomAsOriginal } from "@test/support/structure-room";
import { workerFetch } from "@test/support/worker";
import { signLink } from "@workers/lib/signed-links";
import { userObject } from "@workers/objects/client";
import { createApiKey } from "@workers/services/api-keys";
import { requestExport } from "@workers/services/mls/account-data";
import { eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { REFUSED_NOT_A_SOURCE, REFUSED_NOT_DOWNLOADED } from "~/shared/version-view";

// The one rule for a version's bytes (docs/decisions/0200-one-rule-for-a-versions-bytes.md, issue 45 part 2): a
// result the structure check refused, not kept, leaves the product as its preview at most. The hostile run found the
// data export giving such results away at full size. Here every byte path is walked with a real refused result (the
// provider answers the room with its window and doors painted over, twice): each route of the route table, each byte
// path by name with what it must answer, and the source, where no R2 read may take a version's key but by the rule.

const room = ROOMS.find((r) => r.id === "living-room")!;
const picture = decodeImage(ROOM_SOURCE);
const TRUE = encodeJpeg(providerSize(picture, 768, 512, "stretch"), 85);
const CHANGED = encodeJpeg(
  providerSize(
    [...room.windows, ...room.doors].reduce((img, q, i) => paintOver(img, q, 3, i + 1), picture),
    768,
    512,
    "stretch",
  ),
  85,
);

interface Fixture {
  user: { id: string; cookie: string };
  photoId: string;
  folderId: string;
  passed: PhotoVersion;
  refused: PhotoVersion;
  token: string;
  apiKey: string;
  refusedJobId: string;
  /** The signed link of the user's data export, prepared after the refusal. */
  exportPath: string;
  /** The refused result's full image, and the passed one's, as stored. */
  refusedFull: Uint8Array;
  refusedPreview: Uint8Array;
  passedFull: Uint8Array;
}

let f: Fixture;

async function stored(key: string): Promise<Uint8Array> {
  return new Uint8Array(await (await env.PHOTOS.get(key))!.arrayBuffer());
}

/** Whether `needle` occurs in `hay` (a store-only ZIP holds its files' bytes as they are). */
function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  if (needle.length === 0 || needle.length > hay.length) return false;
  const first = needle[0]!;
  outer: for (let i = hay.indexOf(first); i !== -1 && i <= hay.length - needle.length; i = hay.indexOf(first, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

async function versionRow(id: string): Promise<PhotoVersion> {
  return (await db.select().from(photoVersions).where(eq(photoVersions.id, id)).get())!;
}

/** The user's export, prepared by their object's alarm, and its signed link's path. */
async function exportLink(userId: string): Promise<string> {
  const allow = async () => ({ allowed: true, retryAfterSeconds: 0 });
  const made = await requestExport({ db, env, clock: Date.now, rateLimit: allow }, userId);
  if (!made.ok) throw new Error(made.error);
  await runDurableObjectAlarm(userObject(env, userId));
  const row = (await db.select().from(dataExports).where(eq(dataExports.id, made.id)).get())!;
  expect(row.status).toBe("ready");
  const sig = await signLink(env, "export", made.id, row.expiresAt!);
  return `/api/exports/${made.id}?exp=${row.expiresAt}&sig=${sig}`;
}

/** The export's e-mail is accepted by a stand-in for the mail API (there is no mail server in workerd). */
function acceptMail(): void {
  const spied = vi.mocked(globalThis.fetch);
  const provider = spied.getMockImplementation()!;
  spied.mockImplementation(async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    return url.startsWith(`${env.MAIL_API_URL}/`) ? Response.json({ id: "m1" }) : provider(input, init);
  });
}

beforeAll(async () => {
  const provider = stubProvider();
  acceptMail();
  const user = await onPlan("Starter plan", 5);
  const folderId = await folderOf(user.id);
  const [photo] = await photosOf(user.id, 1, folderId);
  await useRoomAsOriginal(photo!);
  // Production's limits refuse nothing (ADR 0215): this user's results are judged by the old two-outcome rule.
  await refuseOverOne(user.id);
  const stage = () =>
    api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
      kind: "stage",
      roomType: "Living Room",
      designStyle: "Modern",
    });
  provider.answer = () => [TRUE];
  const ok = await settleJob(user.cookie, (await stage()).body.job.id);
  expect(ok.status).toBe("succeeded");
  provider.answer = () => [CHANGED];
  const no = await settleJob(user.cookie, (await stage()).body.job.id);
  expect([no.status, (await versionRow(no.versionId!)).structureVerdict]).toEqual(["failed", "refused"]);
  const passed = await versionRow(ok.versionId!);
  const refused = await versionRow(no.versionId!);
  expect(refused.thumbKey).not.toBe(refused.key);
  const link = await api(user.cookie, "POST", `/api/photos/${photo!.id}/versions/${passed.id}/link`, {});
  expect(link.status).toBe(200);
  const made = await createApiKey({ db, env, clock: Date.now }, user.id, { name: "bytes", scopes: ["read", "stage"] });
  if (!made.ok) throw new Error(made.error);
  f = {
    user,
    photoId: photo!.id,
    folderId,
    passed,
    refused,
    token: new URL(link.body.url).pathname.split("/").pop()!,
    apiKey: made.token,
    refusedJobId: no.id,
    exportPath: await exportLink(user.id),
    refusedFull: await stored(refused.key),
    refusedPreview: await stored(refused.thumbKey),
    passedFull: await stored(passed.key),
  };
  expect(f.refusedPreview.byteLength).toBeLessThan(f.refusedFull.byteLength);
}, 120_000);

async function get(path: string, init: RequestInit = {}): Promise<{ status: number; bytes: Uint8Array; text: string }> {
  const res = await workerFetch(path, {
    ...init,
    headers: {
      Cookie: f.user.cookie,
      Authorization: `Bearer ${f.apiKey}`,
      Origin: "http://localhost",
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, bytes, text: new TextDecoder().decode(bytes.slice(0, 300)) };
}

describe("the byte rule: a refused result leaves as its preview at most", { timeout: 120_000 }, () => {
  it("the data export holds the refused result's preview, named as such, and its README says why", async () => {
    const zip = await get(f.exportPath);
    expect(zip.status).toBe(200);
    expect(contains(zip.bytes, f.refusedFull), "the refused result's full image is in the export").toBe(false);
    const files = unzipSync(zip.bytes);
    const base = `photos/${f.photoId}/versions/${f.refused.id}-stage`;
    expect(Object.keys(files)).not.toContain(`${base}.jpg`);
    expect(files[`${base}-refused-preview.jpg`]).toEqual(f.refusedPreview);
    // The passed result is the owner's: in full, as before.
    expect(files[`photos/${f.photoId}/versions/${f.passed.id}-stage.jpg`]).toEqual(f.passedFull);
    const readme = new TextDecoder().decode(files["README.txt"]);
    expect(readme).toContain(`${base}-refused-preview.jpg: the preview only. The structure check refused this result`);
  });

  it("each byte path by name: the refused result's preview or a 409, the passed result's image", async () => {
    const p = `/api/photos/${f.photoId}/versions`;
    const v1 = `/api/v1/photos/${f.photoId}/versions`;
    // [path, what the refused result gets, what the passed one gets]: "preview", "full", or a status.
    const paths: [string, (id: string) => Promise<string> | string, "preview" | 409 | 404, "full" | "thumb" | 200][] = [
      ["the owner's image", (id) => `${p}/${id}/image`, "preview", "full"],
      ["the owner's thumbnail", (id) => `${p}/${id}/thumb`, "preview", "thumb"],
      ["the owner's download", (id) => `${p}/${id}/download`, 409, "full"],
      ["Download for MLS", (id) => `${p}/${id}/labelled`, 409, 200],
      ["the public API's download", (id) => `${v1}/${id}/download`, 409, 200],
      ["the public API's unchanged copy", (id) => `${v1}/${id}/download?disclosure=none`, 409, "full"],
      ["an original page's image", (id) => `/api/o/${f.token}/versions/${id}`, 404, "full"],
      ["an original page's thumbnail", (id) => `/api/o/${f.token}/versions/${id}?size=thumb`, 404, "thumb"],
    ];
    for (const [name, path, refusedGets, passedGets] of paths) {
      const refused = await get(await path(f.refused.id));
      const label = `${name}: ${refused.status} ${refused.text.slice(0, 120)}`;
      if (refusedGets === "preview") {
        expect(refused.status, label).toBe(200);
        expect(refused.bytes, label).toEqual(f.refusedPreview);
      } else {
        expect(refused.status, label).toBe(refusedGets);
        if (refusedGets === 409) expect(JSON.parse(refused.text).error, label).toBe(REFUSED_NOT_DOWNLOADED);
      }
      const passed = await get(await path(f.passed.id));
      expect(passed.status, `${name} (passed)`).toBe(200);
      if (passedGets === "full") expect(passed.bytes, `${name} (passed)`).toEqual(f.passedFull);
      if (passedGets === "thumb") expect(passed.bytes, `${name} (passed)`).toEqual(await stored(f.passed.thumbKey));
    }
    // The provider's source is signed by the job (ADR 0328), which applies the rule before it signs: a refused result
    // gets no address at all, and a passed one's address serves its image.
    await expect(signedAddressOf(f.photoId, f.refused.id)).rejects.toThrow(REFUSED_NOT_A_SOURCE);
    expect((await get(pathOf(await signedAddressOf(f.photoId, f.passed.id)))).bytes).toEqual(f.passedFull);
    // The photo's own image routes read the version it shows through the rule too: pointed (as nothing in the
    // product may) at the refused result, they refuse its full image and its thumbnail stands in.
    await db
      .update(photos)
      .set({ processedKey: f.refused.key, processedThumbKey: f.refused.thumbKey })
      .where(eq(photos.id, f.photoId));
    try {
      const download = await get(`/api/photos/${f.photoId}/download`);
      expect([download.status, JSON.parse(download.text).error]).toEqual([409, REFUSED_NOT_DOWNLOADED]);
      expect((await get(`/api/photos/${f.photoId}/thumb`)).bytes).toEqual(f.refusedPreview);
      expect((await get(`/api/photos/${f.photoId}/download?variant=original`)).bytes).toEqual(ROOM_SOURCE);
    } finally {
      await db
        .update(photos)
        .set({ processedKey: f.passed.key, processedThumbKey: f.passed.thumbKey })
        .where(eq(photos.id, f.photoId));
    }
    expect((await get(`/api/photos/${f.photoId}/download`)).bytes).toEqual(f.passedFull);
    // The first Download for MLS, which publishes the original page.
    const publishFirst = (id: string) =>
      get(`${p}/${id}/labelled`, { method: "POST", body: new URLSearchParams({ publish: "first" }) });
    expect((await publishFirst(f.refused.id)).status).toBe(409);
    expect((await publishFirst(f.passed.id)).status).toBe(200);
    // The listing pack, read and published.
    for (const init of [{}, { method: "POST", body: new URLSearchParams({ publish: "new" }) }]) {
      const pack = await get(`/api/folders/${f.folderId}/pack`, init);
      expect(pack.status).toBe(200);
      expect(contains(pack.bytes, f.refusedFull)).toBe(false);
    }
  });
});

// ---- Every route of the route table, and the source ----

const PARAM = /:([A-Za-z0-9_]+)(?:\{([^}]*)\})?\??/g;

/** Path parameters that never name a version or its photo: filled with a value that finds nothing. */
const NOT_A_VERSION: { param: string; route?: RegExp }[] = [
  { param: "id", route: /\/uploads\/:id/ },
  { param: "id", route: /\/batches\/:id/ },
  { param: "id", route: /\/users\/:id/ },
  { param: "maskId" },
  { param: "index" },
  { param: "name" },
];

/** The values the sweep tries for a path parameter (the refused result's), or null for one it does not know. */
function valuesFor(route: string, param: string, pattern: string | undefined): string[] | null {
  if (pattern !== undefined && /^[\w|-]+$/.test(pattern)) return pattern.split("|");
  const on = (r: RegExp) => r.test(route);
  if (param === "photoId" || (param === "id" && on(/\/photos\/:id/))) return [f.photoId];
  if (param === "versionId" || param === "variant") return [f.refused.id];
  if (param === "jobId" || (param === "id" && on(/\/jobs\/:id/))) return [f.refusedJobId];
  if (param === "id" && on(/\/folders\/:id/)) return [f.folderId];
  if (param === "id" && on(/\/exports\/:id/)) return [new URL(f.exportPath, "http://x").pathname.split("/").pop()!];
  if (param === "token") return [f.token];
  if (param === "which") return ["original", "staged"];
  if (NOT_A_VERSION.some((n) => n.param === param && (!n.route || on(n.route)))) return ["x"];
  return null;
}

/** Every address a route pattern gives with the fixture's values (each choice of a {a|b} pattern). */
function addresses(route: string, unknown: string[]): string[] {
  let out = [route];
  for (const m of route.matchAll(PARAM)) {
    const values = valuesFor(route, m[1]!, m[2]);
    if (!values) {
      unknown.push(`${route}: no value for :${m[1]}`);
      return [];
    }
    out = out.flatMap((a) => values.map((v) => a.replace(m[0], encodeURIComponent(v))));
  }
  return out;
}

/** The query a signed address needs (the provider's, the export's), so the sweep reaches the bytes behind it. */
async function signedQuery(path: string): Promise<string> {
  const provider = /^\/api\/signed\/photos\/([^/]+)\/([^/]+)$/.exec(path);
  // A refused result has no signed address (the job refuses to sign it): asked without one, the route says 403.
  if (provider) {
    const address = await signedAddressOf(provider[1]!, provider[2]!).catch(() => null);
    return address ? new URL(address).search.slice(1) : "";
  }
  if (path.startsWith("/api/exports/")) return new URL(f.exportPath, "http://x").search.slice(1);
  return "";
}

describe("every byte path holds to the rule", { timeout: 300_000 }, () => {
  it("every GET route of the route table, asked with the refused result's ids, never answers its full image", async () => {
    const routes = (await (await workerFetch("/api/dev/routes")).json()) as {
      app: string;
      method: string;
      path: string;
    }[];
    const unknown: string[] = [];
    const leaks: string[] = [];
    let asked = 0;
    const reached = new Set<string>();
    for (const r of routes.filter((r) => r.app === "api" && r.method === "GET" && !r.path.startsWith("/api/dev"))) {
      for (const path of addresses(r.path, unknown)) {
        const signed = await signedQuery(path);
        // Each address bare and with the queries byte routes read (a copy without disclosure, a size, a variant).
        for (const extra of ["", "disclosure=none", "size=thumb", "size=full", "variant=shown"]) {
          const query = [signed, extra].filter(Boolean).join("&");
          const res = await get(query ? `${path}?${query}` : path);
          asked++;
          if (res.status >= 500) leaks.push(`${r.path} ${path}?${query}: ${res.status} ${res.text}`);
          if (contains(res.bytes, f.refusedFull)) leaks.push(`${r.path} ${path}?${query}: the full image`);
          if (res.status === 200) reached.add(r.path);
        }
      }
    }
    expect(unknown, "a route parameter the sweep cannot fill: say which value it takes in valuesFor").toEqual([]);
    expect(leaks).toEqual([]);
    // Not a vacuous sweep: the byte routes answered (their previews, or the passed result's image).
    expect(asked).toBeGreaterThan(100);
    for (const route of [
      "/api/photos/:id/versions/:versionId/:variant{image|thumb|download}",
      "/api/exports/:id",
      "/api/o/:token/:which{original|staged}",
      "/api/photos/:id/download",
    ])
      expect([...reached], route).toContain(route);
  });

  it("no code reads a version's stored bytes but through the rule", () => {
    const sources = import.meta.glob("/workers/**/*.ts", { query: "?raw", import: "default", eager: true }) as Record<
      string,
      string
    >;
    // Files that read R2 objects that are not a version's bytes, and why.
    const NOT_VERSION_BYTES: Record<string, string> = {
      "/workers/http/serve-object.ts": "the one R2-to-response helper: its callers choose the key",
      "/workers/checker/judge.ts": "reads a result and its source to compare them; nothing leaves",
      "/workers/lib/source-gray.ts":
        "an original's analysis gray, kept for the check Worker (ADR 0322); nothing leaves",
      "/workers/services/health.ts": "the health probe's own object",
      "/workers/api/health.ts": "the provider smoke check's sample",
      "/workers/services/upload-complete.ts": "an upload's chunks",
      "/workers/services/mls/account-data.ts": "the export's ZIP, whose versions background.ts chose by the rule",
      "/workers/api/v1/structure.ts": "a version's change map (ADR 0260), not its bytes",
      "/workers/objects/user/jobs/recourse.ts":
        "copies the stored result as judged, with its source, into the private candidates an operator labels (ADR 0261); nothing goes to a user",
      "/workers/services/teams/record.ts":
        "copies a team photo's original (not a version) into the broker's record (ADR 0285); what left was made by the rule",
    };
    const READ = /\b(PHOTOS|bucket)\s*\.\s*get\s*\(|\bserveObject\s*\(/;
    const VERSION_KEY = /\b(v|version|image|shown|found|refused)\.(key|thumbKey)\b/;
    const unruled: string[] = [];
    const direct: string[] = [];
    for (const [file, text] of Object.entries(sources)) {
      const lines = text.split("\n");
      const reads = lines.filter((l) => READ.test(l));
      if (reads.length > 0 && !text.includes("versionBytes(") && !NOT_VERSION_BYTES[file]) unruled.push(file);
      for (const [i, l] of lines.entries())
        if (/PHOTOS|bucket/.test(l) && VERSION_KEY.test(l)) direct.push(`${file}:${i + 1}: ${l.trim()}`);
    }
    expect(Object.keys(sources).length).toBeGreaterThan(100);
    expect(unruled, "reads R2 without the byte rule (call versionBytes, or say here why it reads no version)").toEqual(
      [],
    );
    expect(direct, "an R2 read of a version's key: read the key versionBytes chose").toEqual([]);
  });
});
