import { readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { toCard } from "@workers/services/library";
import { overLimit, UPLOAD_RULE } from "@workers/services/limits";
import { completeUpload } from "@workers/services/upload-complete";
import { abortUpload, createUpload, putChunk, putThumb, type Refusal, uploadStatus } from "@workers/services/uploads";
import { Hono } from "hono";
import { z } from "zod";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// The resumable upload protocol (docs/decisions/0040-resumable-uploads.md):
//   POST   /api/uploads                 declare {name, size, type} -> {id, chunkSize, chunkCount}
//   PUT    /api/uploads/:id/chunks/:n   one chunk's bytes
//   PUT    /api/uploads/:id/thumb       the thumbnail made in the browser
//   GET    /api/uploads/:id             which chunks are stored (for resume)
//   POST   /api/uploads/:id/complete    checks the whole file, stores the photo -> {photo}
//   DELETE /api/uploads/:id             cancels and deletes every stored byte

const declared = z.object({
  name: z.string().max(255).default(""),
  size: z.number().int().min(0),
  type: z.string().max(100),
});

const DECLARE_MESSAGE = "Please send the photo's name, size and type.";

function refuse(_c: unknown, r: Refusal): Response {
  return failureJson(r);
}

export const uploadsApi = new Hono<ApiEnv>()
  .use(requireApiUser)
  .post("/", async (c) => {
    const parsed = await readJson(c.req.raw, declared, { maxBytes: 4096 });
    if (!parsed.ok) return failureJson(parsed.code === "invalid" ? { ...parsed, error: DECLARE_MESSAGE } : parsed);
    const user = c.get("user")!;
    const limited = await overLimit(c.get("deps"), UPLOAD_RULE, [user.id]);
    if (limited) return failureJson(limited);
    const res = await createUpload({ db: c.get("db"), bucket: c.env.PHOTOS }, user.id, parsed.data);
    if (!res.ok) return refuse(c, res);
    const { ok: _ok, ...body } = res;
    return c.json(body, 201);
  })
  .get("/:id", async (c) => {
    const res = await uploadStatus({ db: c.get("db"), bucket: c.env.PHOTOS }, c.get("user")!.id, c.req.param("id"));
    if (!res.ok) return refuse(c, res);
    c.header("Cache-Control", "no-store");
    const { ok: _ok, ...body } = res;
    return c.json(body);
  })
  .put("/:id/chunks/:index{[0-9]{1,5}}", async (c) => {
    const res = await putChunk(
      { db: c.get("db"), bucket: c.env.PHOTOS },
      c.get("user")!.id,
      c.req.param("id"),
      Number(c.req.param("index")),
      c.req.raw.body,
    );
    if (!res.ok) return refuse(c, res);
    return c.json({ received: res.index });
  })
  .put("/:id/thumb", async (c) => {
    const res = await putThumb(
      { db: c.get("db"), bucket: c.env.PHOTOS },
      c.get("user")!.id,
      c.req.param("id"),
      c.req.raw.body,
    );
    if (!res.ok) return refuse(c, res);
    return c.json({ thumb: true });
  })
  .post("/:id/complete", async (c) => {
    const res = await completeUpload({ db: c.get("db"), bucket: c.env.PHOTOS }, c.get("user")!.id, c.req.param("id"));
    if (!res.ok) return refuse(c, res);
    return c.json({ photo: toCard(res.photo) }, 201);
  })
  .delete("/:id", async (c) => {
    const res = await abortUpload({ db: c.get("db"), bucket: c.env.PHOTOS }, c.get("user")!.id, c.req.param("id"));
    if (!res.ok) return refuse(c, res);
    return c.json({ status: res.status });
  });
