import { answerHeaders, callerRequestKey, NO_STORE } from "@workers/api/answers";
import { readJson, readMultipart } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { checkUrlSyntax, urlPolicy } from "@workers/lib/safe-url";
import { currentBalance } from "@workers/services/account";
import { inKeyTerms, keepJobAnswer, onceForKey, requestHash, storedJobAnswer } from "@workers/services/api-idempotency";
import type { ApiCaller } from "@workers/services/api-keys";
import { fetchPhoto, storeApiPhoto } from "@workers/services/api-photos";
import { jobCallback } from "@workers/services/jobs/callback-url";
import { getJob, jobView, requestJob } from "@workers/services/jobs/start";
import { getVersion, listVersions } from "@workers/services/jobs/versions";
import { getPhoto } from "@workers/services/library";
import { overLimit, UPLOAD_RULE } from "@workers/services/limits";
import { type PhotoAccess, photoAccess } from "@workers/services/teams/access";
import { keyPayer, teamPool } from "@workers/services/teams/keys";
import type { z } from "zod";
import { apiVersionAddresses } from "~/shared/api-addresses";
import { type Failure, fail, NOT_FOUND } from "~/shared/result";
import { cutText } from "~/shared/text";
import { MAX_UPLOAD_BYTES } from "~/shared/upload-rules";
import { type FlaggedBy, type StructureVerdict, structureView } from "~/shared/version-view";
import { type Ctx, define, errors, errorsSaying, json, params, v1 } from "./define";
import { defineListingDownloads } from "./downloads";
import { defineKeep } from "./keep";
import * as S from "./schemas";
import { defineStructureRoutes } from "./structure";

export { v1 };

// The public API, /api/v1 (docs/decisions/0120-public-api.md): a thin,
// versioned face over the same services the pages use. Every route is
// declared once with its zod schemas; that declaration both mounts the
// handler and feeds /api/v1/openapi.json. Bodies are read by workers/http/body
// (never by a validator that could throw), so bad input is a 4xx.

function photoView(p: {
  id: string;
  name: string;
  contentType: string;
  bytes: number;
  width: number;
  height: number;
  createdAt: number;
}) {
  return {
    id: p.id,
    name: p.name,
    contentType: p.contentType as "image/jpeg" | "image/png",
    bytes: p.bytes,
    width: p.width,
    height: p.height,
    createdAt: p.createdAt,
  };
}

function versionView(v: {
  id: string;
  photoId: string;
  kind: "stage" | "sky" | "removal";
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  createdAt: number;
  structureVerdict: StructureVerdict | null;
  structureScore: number | null;
  structureReasons: string[] | null;
  structureFlagged: FlaggedBy | null;
  structureConfirmedAt: number | null;
  structureMapKey: string | null;
}) {
  return {
    id: v.id,
    photoId: v.photoId,
    kind: v.kind,
    contentType: v.contentType,
    width: v.width,
    height: v.height,
    bytes: v.bytes,
    createdAt: v.createdAt,
    structure: structureView(v, `/api/v1/photos/${v.photoId}/versions/${v.id}`),
    ...apiVersionAddresses("", v),
  };
}

function answer(c: Ctx, a: { status: number; body: unknown }, replayed = false): Response {
  const { status, body } = a;
  return c.json(body as object, status as 200, answerHeaders(replayed));
}

// ---- Photos ----

define(
  {
    method: "post",
    path: "/photos",
    scope: "stage",
    summary: "Upload a photo",
    description: "Send a JPG or PNG (at most 10 MB and 24 megapixels) as multipart/form-data, field `file`.",
    request: {
      headers: S.IdempotencyHeader,
      body: { required: true, content: { "multipart/form-data": { schema: S.PhotoUpload } } },
    },
    responses: { 201: json(S.PhotoAnswer, "The stored photo"), ...errors(400, 401, 403, 409, 413, 415, 429) },
  },
  async (c, caller) => {
    const key = callerRequestKey(c.req.raw.headers, caller);
    if (key instanceof Response) return key;
    const form = await readMultipart(c.req.raw, { maxBytes: MAX_UPLOAD_BYTES + 64 * 1024 });
    if (!form.ok) return failureJson(form);
    const file = form.files.file;
    if (!file) return failureJson(fail("invalid", "Send the photo in the multipart field `file`."));
    const name = (form.fields.name ? cutText(form.fields.name, 100) : "") || file.name || "photo";
    const bytes = new Uint8Array(await file.arrayBuffer());
    const hash = requestHash("POST /photos", { name, sha: await digest(bytes) });
    const deps = c.get("deps");
    const result = await onceForKey(deps.db, caller.userId, key.key, hash, deps.clock(), async () => {
      // The account's uploads an hour, as the pages' (a person can make many keys; each has its own rate).
      const limited = await overLimit(deps, UPLOAD_RULE, [caller.userId]);
      if (limited) return failAsAnswer(limited);
      const stored = await storeApiPhoto(deps, caller.userId, name, bytes, caller.team?.folderId ?? null);
      return stored.ok ? { status: 201, body: { photo: photoView(stored.photo) } } : failAsAnswer(stored);
    });
    return answerOrFailure(c, result);
  },
);

define(
  {
    method: "post",
    path: "/photos/from-url",
    scope: "stage",
    summary: "Upload a photo by URL",
    description:
      "We fetch the photo (a public address: https on port 443 or http on port 80, never Stagewise itself; 15 s, same limits as an upload) and store it.",
    request: {
      headers: S.IdempotencyHeader,
      body: { required: true, content: { "application/json": { schema: S.PhotoFromUrl } } },
    },
    responses: { 201: json(S.PhotoAnswer, "The stored photo"), ...errors(400, 401, 403, 409, 413, 415, 429) },
  },
  async (c, caller) => {
    const key = callerRequestKey(c.req.raw.headers, caller);
    if (key instanceof Response) return key;
    const body = await readJson(c.req.raw, S.PhotoFromUrl, { maxBytes: 8 * 1024 });
    if (!body.ok) return failureJson(body);
    const policy = urlPolicy(c.env);
    const syntax = checkUrlSyntax(body.data.url, policy);
    if (!syntax.ok) return failureJson(fail("invalid", syntax.reason, { fieldErrors: { url: syntax.reason } }));
    const deps = c.get("deps");
    const hash = requestHash("POST /photos/from-url", body.data);
    const result = await onceForKey(deps.db, caller.userId, key.key, hash, deps.clock(), async () => {
      const limited = await overLimit(deps, UPLOAD_RULE, [caller.userId]);
      if (limited) return failAsAnswer(limited);
      const fetched = await fetchPhoto(policy, body.data.url);
      if (!fetched.ok) return failAsAnswer(fetched);
      const stored = await storeApiPhoto(
        deps,
        caller.userId,
        body.data.name ?? fetched.fileName,
        fetched.bytes,
        caller.team?.folderId ?? null,
      );
      return stored.ok ? { status: 201, body: { photo: photoView(stored.photo) } } : failAsAnswer(stored);
    });
    return answerOrFailure(c, result);
  },
);

// ---- Jobs ----

define(
  {
    method: "post",
    path: "/photos/{photoId}/jobs",
    scope: "stage",
    // The handler reads the photo once with photoAccess, which says who pays too (requestJob takes it).
    photoReach: "handler",
    summary: "Stage a photo, replace its sky, or remove its furniture",
    description:
      "Reserves one credit and queues the job (202). Poll GET /jobs/{jobId}, or name a callbackUrl to receive a signed event when it finishes.",
    request: {
      params: S.PhotoParams,
      headers: S.IdempotencyHeader,
      body: { required: true, content: { "application/json": { schema: S.JobRequest } } },
    },
    responses: {
      202: json(S.JobAnswer, "The queued job and the balance after the reservation"),
      ...errorsSaying(
        {
          409: "The photo is in the trash (restore it first; nothing is reserved), or the Idempotency-Key was used for another request, or its first request is still running",
        },
        400,
        401,
        402,
        403,
        404,
        409,
        415,
        429,
      ),
    },
  },
  async (c, caller) => {
    const key = callerRequestKey(c.req.raw.headers, caller);
    if (key instanceof Response) return key;
    const p = params(c, S.PhotoParams);
    if (!p.ok) return failureJson(NOT_FOUND);
    const body = await readJson(c.req.raw, S.JobRequest, { maxBytes: 8 * 1024 });
    if (!body.ok) return failureJson(body);
    // The callback carries its address's check (its name resolved), which requestJob runs before the credit is reserved.
    const { callbackUrl, ...job } = body.data;
    const hash = requestHash(`POST /photos/${p.data.photoId}/jobs`, body.data);
    const asked = { photoId: p.data.photoId, key: key.key ?? undefined, hash, body: body.data };
    if (caller.team) return teamKeyJob(c, caller, asked);
    // A personal key acts as its member: a photo of a team listing they are an active member of is staged on the
    // team's pool under their name, as the page stages it (docs/decisions/0270, amendment "a member's personal key").
    // One read of the photo: it says who pays, and requestJob takes it rather than reading it again.
    const access = await photoAccess(c.get("db"), caller.userId, p.data.photoId);
    if (access?.teamId) return teamKeyJob(c, caller, asked, { ...access, teamId: access.teamId });
    const res = await requestJob(c.get("deps"), caller.userId, p.data.photoId, job, {
      access,
      api: {
        idempotency: key.key ? { key: key.key, hash } : undefined,
        callback: callbackUrl !== undefined ? jobCallback(c.get("deps").env, callbackUrl, caller.keyId) : undefined,
      },
    });
    if (!res.ok) return failureJson(res);
    return answer(c, { status: 202, body: { job: res.job, credits: res.credits } }, res.replayed);
  },
);

define(
  {
    method: "get",
    path: "/jobs/{jobId}",
    scope: "read",
    summary: "Get a job",
    request: { params: S.JobParams },
    responses: { 200: json(S.JobStatus, "The job and, once it succeeded, its version"), ...errors(401, 403, 404, 429) },
  },
  async (c, caller) => {
    const p = params(c, S.JobParams);
    if (!p.ok) return failureJson(NOT_FOUND);
    const db = c.get("db");
    const job = await getJob(db, p.data.jobId);
    if (!job || job.userId !== caller.userId) return failureJson(NOT_FOUND);
    // Read while the caller may still reach the job's photo: a member removed from the team whose listing holds it
    // (the job ran there, or the photo was moved there since) hears the 404 of a made-up id (ADR 0271, 0337). A
    // member's job on a teammate's photo: its version is the photo's owner's row (ADR 0280).
    const scope = await photoAccess(db, caller.userId, job.photoId);
    if (!scope) return failureJson(NOT_FOUND);
    const version = job.versionId ? await getVersion(db, scope.ownerId, job.photoId, job.versionId) : undefined;
    return c.json({ job: jobView(job), version: version ? versionView(version) : null }, 200, NO_STORE);
  },
);

/**
 * A job paid from a team's pool through the public API: a team key's (docs/decisions/0295-team-api-keys.md), in the
 * team's runner on a photo of the team's listings, under the key's name; or a member's personal key on a photo of a
 * listing of `memberTeam` (ADR 0270's amendment), in the member's object under the member's name. Either way through
 * the same reserve as a member's job (ADR 0270). The Idempotency-Key is its submission key: the same request sent
 * again answers the job it started, charged once; the key sent with another request is refused (409).
 */
async function teamKeyJob(
  c: Ctx,
  caller: ApiCaller,
  /** The request as the route read it, with its Idempotency-Key and the digest that key is stored under. */
  asked: { photoId: string; key: string | undefined; hash: string; body: z.infer<typeof S.JobRequest> },
  /** A member's personal key on a photo of a team listing: the photo as the route read it, with its team. */
  member?: PhotoAccess & { teamId: string },
) {
  const { photoId, key, hash } = asked;
  const { callbackUrl, ...job } = asked.body;
  const memberTeam = member?.teamId;
  const deps = c.get("deps");
  const now = deps.clock();
  if (key) {
    // The answer stored under the key (ADR 0354), also one sent first while the photo was the member's own: the
    // same request is replayed, another refused, before the job is compared.
    const stored = await storedJobAnswer(deps.db, caller.userId, key, hash, now);
    if (stored && "replay" in stored) return answer(c, { status: 202, body: stored.replay }, true);
    if (stored) return failureJson(stored);
  }
  const res = await requestJob(deps, caller.userId, photoId, job, {
    ...(member ? { access: member } : {}),
    submission: key,
    teamKey: {
      teamId: memberTeam ?? caller.team!.teamId,
      payer: memberTeam ? caller.userId : keyPayer(caller.keyId),
      // Signed with the key's own callback secret, delivered as a personal key's (ADR 0315).
      ...(callbackUrl !== undefined ? { callback: jobCallback(deps.env, callbackUrl, caller.keyId) } : {}),
    },
  });
  if (!res.ok) return failureJson(key ? inKeyTerms(res) : res);
  const started = { job: res.job, credits: res.credits };
  const replayed = res.replayed === true;
  if (key) {
    const kept = await keepJobAnswer(deps.db, caller.userId, { key, hash, answer: started, replayed }, now);
    if (kept) return failureJson(kept);
  }
  return answer(c, { status: 202, body: started }, replayed);
}

// ---- Versions ----

define(
  {
    method: "get",
    path: "/photos/{photoId}/versions",
    scope: "read",
    summary: "List a photo's versions",
    request: { params: S.PhotoParams },
    responses: { 200: json(S.VersionList, "Newest first"), ...errors(401, 403, 404, 429) },
  },
  async (c, caller) => {
    const p = params(c, S.PhotoParams);
    if (!p.ok) return failureJson(NOT_FOUND);
    const db = c.get("db");
    const photo = await getPhoto(db, caller.userId, p.data.photoId);
    if (!photo) return failureJson(NOT_FOUND);
    const versions = await listVersions(db, caller.userId, photo.id);
    return c.json({ versions: versions.map(versionView) }, 200, NO_STORE);
  },
);

// "Keep it anyway" for a refused result, as the page's route (docs/decisions/0232-an-api-that-says-what-it-means.md).
defineKeep(versionView);

// A version's download for the listing and its original page (docs/decisions/0170-mls-profiles.md).
defineListingDownloads();
defineStructureRoutes();

// ---- Balance ----

define(
  {
    method: "get",
    path: "/balance",
    scope: "read",
    summary: "Read the credit balance",
    responses: { 200: json(S.Balance, "Credits left"), ...errors(401, 403, 429) },
  },
  async (c, caller) =>
    c.json(
      {
        credits: caller.team
          ? await teamPool(c.get("db"), caller.team.teamId)
          : await currentBalance(c.env, caller.userId),
      },
      200,
      NO_STORE,
    ),
);

// ---- The document ----

export function openApiDocument(origin: string) {
  return v1.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Stagewise API",
      version: "1.0.0",
      description:
        "Stage photos, replace skies and remove furniture from your own software. Every job costs one credit, reserved when it is queued and returned if it fails. See /developers.",
    },
    servers: [{ url: `${origin}/api/v1` }],
  });
}

v1.get("/openapi.json", (c) =>
  c.json(openApiDocument(new URL(c.req.url).origin), 200, { "Cache-Control": "public, max-age=300" }),
);

// ---- helpers ----

async function digest(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

function failAsAnswer(f: Failure): { status: number; body: unknown } {
  return { status: 0, body: f };
}

function answerOrFailure(c: Ctx, r: { status: number; body: unknown } | Failure): Response {
  if ("ok" in r && r.ok === false) return failureJson(r);
  const a = r as { status: number; body: unknown };
  if (a.status === 0) return failureJson(a.body as Failure);
  return answer(c, a);
}
