import type { JobParams } from "@db/schema";
import { contentDisposition } from "@workers/lib/content-disposition";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/user-object";
import { getJob, getVersion, isJobKind, jobView, listVersions, sourceVariant } from "@workers/services/jobs";
import { getPhoto } from "@workers/services/library";
import { verifySignature } from "@workers/services/signed-urls";
import { Hono } from "hono";
import { designStyleCode, isSkyType, QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES, ROOM_TYPES } from "~/shared/catalog";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// AI jobs and the versions they produce. POST answers 202 with the job at
// once; the page polls GET /api/jobs/:id. Only the owner sees a job or a
// version; anyone else gets the same 404 as for one that does not exist.

export const MISSING_OPTIONS = "Please select all required options";
export const INVALID_SKY_TYPE = "Invalid sky type";

const ROOM_CODES = new Set([...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => r.code));
const ROOM_NAMES = new Map([...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => [r.name.toLowerCase(), r.code]));

function roomCode(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  return ROOM_CODES.has(v) ? v : ROOM_NAMES.get(v);
}

function styleCode(value: string): string {
  const quick = QUICK_FURNITURE_STYLES.find((s) => s.name.toLowerCase() === value.trim().toLowerCase());
  return quick?.code ?? designStyleCode(value);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim().length > 0 && v.length <= 100 ? v : undefined;
}

const NO_STORE = { "Cache-Control": "private, no-store" };

async function serveKey(bucket: R2Bucket, key: string, headers: Record<string, string>): Promise<Response> {
  const obj = await bucket.get(key);
  if (!obj) return Response.json({ error: "Not found." }, { status: 404 });
  const h = new Headers(headers);
  h.set("Content-Type", obj.httpMetadata?.contentType ?? "application/octet-stream");
  h.set("Content-Length", String(obj.size));
  h.set("ETag", obj.httpEtag);
  return new Response(obj.body, { headers: h });
}

export const jobsApi = new Hono<ApiEnv>()
  // The provider fetches our image through this signed address (no cookie).
  .get("/signed/photos/:photoId/:variant", async (c) => {
    const { photoId, variant } = c.req.param();
    const ok = await verifySignature(c.env, photoId, variant, c.req.query("exp"), c.req.query("sig"), Date.now());
    if (!ok) return c.json({ error: "Forbidden." }, 403);
    const photo = await c.get("db").query.photos.findFirst({ where: (p, { eq }) => eq(p.id, photoId) });
    if (!photo) return c.json({ error: "Not found." }, 404);
    let key = photo.originalKey;
    if (variant !== "original") {
      const version = await getVersion(c.get("db"), photo.userId, photoId, variant);
      if (!version) return c.json({ error: "Not found." }, 404);
      key = version.key;
    }
    return serveKey(c.env.PHOTOS, key, NO_STORE);
  })
  .use("/photos/*", requireApiUser)
  .use("/jobs/*", requireApiUser)
  .post("/photos/:id/jobs", async (c) => {
    const user = c.get("user")!;
    let body: Record<string, unknown>;
    try {
      const parsed = await c.req.json();
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      return c.json({ error: "The request body must be a JSON object." }, 400);
    }
    const kind = body.kind;
    if (!isJobKind(kind)) return c.json({ error: MISSING_OPTIONS }, 400);
    const params: JobParams = {};
    if (kind === "stage") {
      const room = str(body.roomType);
      const style = str(body.designStyle);
      if (!room || !style) return c.json({ error: MISSING_OPTIONS }, 400);
      const code = roomCode(room);
      if (!code) return c.json({ error: MISSING_OPTIONS }, 400);
      params.roomType = code;
      params.designStyle = styleCode(style);
    } else if (kind === "sky") {
      if (body.skyType === undefined || body.skyType === null || body.skyType === "") {
        return c.json({ error: MISSING_OPTIONS }, 400);
      }
      if (!isSkyType(body.skyType)) return c.json({ error: INVALID_SKY_TYPE }, 400);
      params.skyType = body.skyType;
    }
    const db = c.get("db");
    const photo = await getPhoto(db, user.id, c.req.param("id"));
    if (!photo || photo.trashedAt !== null) return c.json({ error: "Not found." }, 404);
    if (kind !== "stage") params.source = await sourceVariant(db, photo);
    const jobId = randomToken();
    const result = await userObject(c.env, user.id).startJob(user.id, { jobId, photoId: photo.id, kind, params });
    if (!result.ok) {
      const status = result.error === "Insufficient credits" ? 402 : 400;
      return c.json({ error: result.error, credits: result.balance }, status);
    }
    const job = await getJob(db, jobId);
    return c.json(
      { job: job ? jobView(job) : { id: jobId, status: "queued" }, credits: result.balance },
      202,
      NO_STORE,
    );
  })
  .get("/jobs/:id", async (c) => {
    const db = c.get("db");
    const job = await getJob(db, c.req.param("id"));
    if (!job || job.userId !== c.get("user")!.id) return c.json({ error: "Not found." }, 404);
    const version = job.versionId ? await getVersion(db, job.userId, job.photoId, job.versionId) : undefined;
    return c.json({ job: jobView(job), version: version ? versionView(version) : null }, 200, NO_STORE);
  })
  .get("/photos/:id/versions", async (c) => {
    const user = c.get("user")!;
    const db = c.get("db");
    const photo = await getPhoto(db, user.id, c.req.param("id"));
    if (!photo) return c.json({ error: "Not found." }, 404);
    const versions = await listVersions(db, user.id, photo.id);
    return c.json({ versions: versions.map(versionView) }, 200, NO_STORE);
  })
  .get("/photos/:id/versions/:versionId/:variant{image|thumb|download}", async (c) => {
    const user = c.get("user")!;
    const { id, versionId, variant } = c.req.param();
    const version = await getVersion(c.get("db"), user.id, id, versionId);
    if (!version) return c.json({ error: "Not found." }, 404);
    const headers: Record<string, string> = { "Cache-Control": "private, max-age=31536000, immutable", Vary: "Cookie" };
    if (variant === "download") {
      const photo = await getPhoto(c.get("db"), user.id, id);
      const ext = version.contentType === "image/png" ? "png" : "jpg";
      headers["Content-Disposition"] = contentDisposition(
        "attachment",
        `${photo?.name ?? "photo"} (${version.kind} ${new Date(version.createdAt).toISOString().slice(0, 10)}).${ext}`,
      );
    }
    return serveKey(c.env.PHOTOS, variant === "thumb" ? version.thumbKey : version.key, headers);
  });

function versionView(v: {
  id: string;
  photoId: string;
  kind: string;
  params: JobParams;
  width: number;
  height: number;
  bytes: number;
  createdAt: number;
}) {
  const base = `/api/photos/${v.photoId}/versions/${v.id}`;
  return {
    id: v.id,
    photoId: v.photoId,
    kind: v.kind,
    params: { roomType: v.params.roomType, designStyle: v.params.designStyle, skyType: v.params.skyType },
    width: v.width,
    height: v.height,
    bytes: v.bytes,
    createdAt: v.createdAt,
    imageUrl: `${base}/image`,
    thumbUrl: `${base}/thumb`,
    downloadUrl: `${base}/download`,
  };
}
