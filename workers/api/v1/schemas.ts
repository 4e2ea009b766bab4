import { z } from "@hono/zod-openapi";
import { jobFields } from "~/shared/job-request";
import { FAILURE_CODES } from "~/shared/result";

// The public API's shapes (docs/decisions/0120-public-api.md). The same zod
// objects check requests and generate /api/v1/openapi.json, so the document
// cannot drift from what the routes accept.

export const Failure = z
  .object({
    ok: z.literal(false),
    code: z.enum(FAILURE_CODES).openapi({
      example: "invalid",
      description: "One of a closed set; each code has one HTTP status (invalid 400, unauthenticated 401, …).",
    }),
    error: z.string().openapi({ example: "Please select all required options" }),
    fieldErrors: z.record(z.string(), z.string()).optional(),
    retryAfterSeconds: z.number().optional(),
  })
  .openapi("Failure");

export const Photo = z
  .object({
    id: z.string(),
    name: z.string(),
    contentType: z.enum(["image/jpeg", "image/png"]),
    bytes: z.number().int(),
    width: z.number().int(),
    height: z.number().int(),
    createdAt: z.number().int().openapi({ description: "Unix epoch milliseconds." }),
  })
  .openapi("Photo");

export const PhotoAnswer = z.object({ photo: Photo }).openapi("PhotoAnswer");

export const PhotoFromUrl = z
  .object(
    {
      url: z.string().max(2048).openapi({ example: "https://example.com/listing/living-room.jpg" }),
      name: z.string().max(100).optional(),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `Unknown field: ${issue.keys.join(", ")}. The fields are listed at /developers.`
          : undefined,
    },
  )
  // An unknown field is refused, not dropped (ADR 0325): `folderId` here would be read as if it were honoured.
  .strict()
  .openapi("PhotoFromUrl");

export const PhotoUpload = z
  .object({
    file: z.any().openapi({ type: "string", format: "binary", description: "A JPG or PNG of at most 10 MB." }),
    name: z.string().max(100).optional(),
  })
  .openapi("PhotoUpload");

/** Why a field the page's route reads is refused here, rather than read or ignored. */
const NOT_HERE: Record<string, string> = {
  maskId: "This API takes no mask yet: a removal empties the whole room. Send the job without maskId.",
  variations: "This API makes one result per job: send one job for each result you want, without variations.",
};

/**
 * The job request of the page's route (workers/services/jobs/request.ts) and a callback: one contract. A field
 * it does not read is refused, not ignored: a client that sends a mask or a count of variations would otherwise
 * be charged for a job that is not the one it asked for.
 */
export const JobRequest = z
  .object(
    {
      ...jobFields,
      callbackUrl: z.string().max(2048).optional().openapi({
        description:
          "A public URL we POST a signed job.succeeded or job.failed event to: https on port 443 (or http on port 80), never Stagewise itself.",
      }),
    },
    {
      error: (issue) => {
        if (issue.code !== "unrecognized_keys") return undefined;
        const known = issue.keys.find((k) => k in NOT_HERE);
        return known
          ? NOT_HERE[known]
          : `Unknown field: ${issue.keys.join(", ")}. The fields are listed at /developers.`;
      },
    },
  )
  .strict()
  .openapi("JobRequest");

export const Job = z
  .object({
    id: z.string(),
    photoId: z.string(),
    kind: z.enum(["stage", "sky", "removal"]),
    params: z.object({
      roomType: z.string().optional(),
      designStyle: z.string().optional(),
      skyType: z.string().optional(),
      source: z.string().optional(),
      colorScheme: z.string().optional(),
      specialityDecor: z.string().optional(),
      designCreativity: z.number().optional(),
      prompt: z.string().optional(),
      styleReference: z
        .object({ photoId: z.string(), versionId: z.string(), strength: z.number() })
        .optional()
        .openapi({
          description:
            "The listing's look when the job was asked for: a staged version (of a photo of the same folder's owner) sent to the provider as its style reference, and how closely it is followed, 0-1. Set from the folder the photo is in; absent when the folder has none.",
        }),
    }),
    status: z.enum(["queued", "running", "succeeded", "failed"]),
    error: z.string().nullable(),
    versionId: z.string().nullable(),
    createdAt: z.number().int(),
    startedAt: z.number().int().nullable(),
    finishedAt: z.number().int().nullable(),
  })
  .openapi("Job");

export const Version = z
  .object({
    id: z.string(),
    photoId: z.string(),
    kind: z.enum(["stage", "sky", "removal"]),
    contentType: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    bytes: z.number().int(),
    createdAt: z.number().int(),
    structure: z
      .object({
        verdict: z.enum(["passed", "flagged", "refused", "kept", "unchecked"]),
        score: z
          .number()
          .nullable()
          .openapi({ description: "The check's score: higher is further from the photo's architecture." }),
        reasons: z.array(z.string()).openapi({
          description:
            'Where the check saw the room change, as places on the photo ("upper left", "lower centre"); empty when it passed or cannot say.',
        }),
        message: z.string().nullable().openapi({
          description:
            "A flagged result's message for the agent: what to check, where, and why it was delivered. Null otherwise.",
        }),
        confirmedAt: z.number().int().nullable().openapi({
          description:
            'A flagged result: when its owner confirmed "I checked the walls and windows" (POST …/confirm-structure; epoch ms), null until then. Null for other verdicts.',
        }),
        changesUrl: z.string().nullable().openapi({
          description:
            "GET it with the same API key: the check's change map, a gray PNG at the check's working size (long edge 320 px, the photo's aspect): white where it saw a line of the room lost or added, gray where a cell's edges changed, black where the result keeps the source. Null when no map was stored (the check could not run, or the version predates maps).",
        }),
      })
      .nullable()
      .openapi({
        description:
          "What the structure check said: passed; flagged (it may have changed the room: delivered and charged, downloadable, but for a listing only once confirmed with POST …/confirm-structure); refused (the result moved walls, windows or doors: the job failed uncharged, the image is not downloadable until kept); kept (refused, then kept for a credit); unchecked (the check could not run). Null for versions made before the check.",
      }),
    downloadUrl: z.string().nullable().openapi({
      description:
        "GET it with the same API key: the download for the listing; for a kept result your own copy (?disclosure=none), since a result that changed the room never goes into a listing. Null for a refused result: keep it first (keepUrl).",
    }),
    keepUrl: z.string().nullable().openapi({
      description:
        "For a refused result only: POST it to keep the result for one credit (then it has a downloadUrl). Null otherwise.",
    }),
  })
  .openapi("Version");

export const StructureConfirmed = z
  .object({
    versionId: z.string(),
    confirmedAt: z.number().int().openapi({ description: "When it was confirmed (the first confirmation; epoch ms)." }),
  })
  .openapi("StructureConfirmed");

export const JobAnswer = z.object({ job: Job, credits: z.number().int() }).openapi("JobCreated");
export const JobStatus = z.object({ job: Job, version: Version.nullable() }).openapi("JobStatus");
export const VersionList = z.object({ versions: z.array(Version) }).openapi("VersionList");
export const Balance = z.object({ credits: z.number().int() }).openapi("Balance");

const id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+$/, "Not found.");
export const PhotoParams = z.object({ photoId: id.openapi({ param: { name: "photoId", in: "path" } }) });
export const JobParams = z.object({ jobId: id.openapi({ param: { name: "jobId", in: "path" } }) });
export const VersionParams = z.object({
  photoId: id.openapi({ param: { name: "photoId", in: "path" } }),
  versionId: id.openapi({ param: { name: "versionId", in: "path" } }),
});
export const DownloadQuery = z
  .object({
    disclosure: z
      .enum(["profile", "none"], { message: 'disclosure is "profile" (the default) or "none".' })
      .optional()
      .openapi({
        param: { name: "disclosure", in: "query" },
        description:
          "profile (default): as the listing's MLS profile wants it; none: the stored result unchanged (not for advertising).",
      }),
  })
  .strict();
export const OriginalPage = z
  .object({
    url: z.string().openapi({ description: "The public page: give it wherever the altered photo is advertised." }),
  })
  .openapi("OriginalPage");
export const IdempotencyHeader = z.object({
  "Idempotency-Key": z
    .string()
    .max(255)
    .optional()
    .openapi({
      param: { name: "Idempotency-Key", in: "header" },
      description: "Retries with the same key get the first answer and are never charged twice (kept 24 hours).",
    }),
});
