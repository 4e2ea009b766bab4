import { z } from "@hono/zod-openapi";
import { ROOM_TYPES, SKY_TYPES } from "./catalog";
import { MAX_VARIATIONS, VARIATIONS_MESSAGE } from "./listing";
import { MASK_ID_PATTERN, MASK_MESSAGES } from "./masks";
import {
  COLOR_SCHEME_CODES,
  COLOR_SCHEMES,
  DEFAULT_CREATIVITY,
  INVALID_SKY_TYPE,
  MISSING_OPTIONS,
  PROMPT_MAX,
  SPECIALITY_DECOR_CODES,
  SPECIALITY_DECORS,
} from "./staging-options";
import { hasControlCharacters } from "./text";

// A job request's shape: the one contract of the page's JSON route (POST /api/photos/:id/jobs), the public API
// (which adds a callbackUrl and documents these fields in /api/v1/openapi.json) and a batch's photos. Here, in
// app/shared, so the browser's job body is typed from it (a type import: no schema code reaches the client bundle).
// The server's reading of a request into a job is workers/services/jobs/request.ts.

const CREATIVITY_MESSAGE = "Creativity must be a number from 0 to 1.";
const JOB_KINDS = ["stage", "sky", "removal"] as const;

/** The advanced choices of a staging job (Starter and up), shared by a single request and a batch. */
export const stagingChoices = {
  colorScheme: z
    .string()
    .refine((v) => COLOR_SCHEME_CODES.has(v), "Unknown colour palette.")
    .optional()
    .openapi({
      description: `Advanced customization (Starter, Standard, Professional): the provider's palettes, ${COLOR_SCHEMES.map((c) => `${c.code} (${c.name})`).join(", ")}.`,
    }),
  specialityDecor: z
    .string()
    .refine((v) => SPECIALITY_DECOR_CODES.has(v), "Unknown decor theme.")
    .optional()
    .openapi({
      description: `Advanced customization: the provider's seasonal decor, ${SPECIALITY_DECORS.map((d) => `${d.code} (${d.name})`).join(", ")}.`,
    }),
  designCreativity: z
    .number(CREATIVITY_MESSAGE)
    .min(0, CREATIVITY_MESSAGE)
    .max(1, CREATIVITY_MESSAGE)
    .optional()
    .openapi({
      description: `Advanced customization: how far the result may depart from the photo, 0 (keep the room as it is) to 1 (most creative); the provider's default ${DEFAULT_CREATIVITY}.`,
    }),
  keepOriginalFloor: z.boolean().optional().openapi({
    deprecated: true,
    description: "Deprecated and ignored: no current client of the provider sends it, so it did nothing.",
  }),
  prompt: z
    .string()
    .trim()
    .max(PROMPT_MAX, `Instructions must be at most ${PROMPT_MAX} characters.`)
    .refine((v) => !hasControlCharacters(v), "Instructions cannot contain control characters.")
    .optional()
    .openapi({
      description:
        "Advanced customization: an instruction of at most 300 characters. The provider takes it as the whole direction for the result; the room type and style are added to it.",
    }),
};

const roomCodes = ROOM_TYPES.map((r) => r.code);

/** The fields of a job request (JobRequest adds the page's variations; the public API adds its callbackUrl). */
export const jobFields = {
  kind: z.enum(JOB_KINDS, { error: MISSING_OPTIONS }),
  roomType: z
    .string()
    .max(100)
    .optional()
    .openapi({
      description: `Required for kind=stage: a room code or name, e.g. ${roomCodes.slice(0, 4).join(", ")}.`,
    }),
  designStyle: z
    .string()
    .max(100)
    .optional()
    .openapi({ description: "Required for kind=stage: a design style name, e.g. Scandinavian, Modern." }),
  skyType: z.enum(SKY_TYPES, { error: INVALID_SKY_TYPE }).optional().openapi({ description: "Required for kind=sky." }),
  sourceVersionId: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: "Start from this version of the photo instead of the original (any kind)." }),
  ...stagingChoices,
};

/**
 * The page's job request: the fields, how many results (variations, 1-4, a credit each) and, for a removal, the
 * brush's mask (POST /api/photos/:id/masks answers its id). The public API takes no mask yet (ADR 0195).
 */
export const JobRequest = z.object({
  ...jobFields,
  variations: z
    .union([z.number().int().min(1).max(MAX_VARIATIONS), z.string().regex(/^\d{1,2}$/)], { error: VARIATIONS_MESSAGE })
    .optional(),
  maskId: z.string().regex(MASK_ID_PATTERN, MASK_MESSAGES.badId).optional(),
});

export type JobRequest = z.infer<typeof JobRequest>;

/** What the page sends to start a job, before the server reads it (its input type). */
export type JobRequestBody = z.input<typeof JobRequest>;
