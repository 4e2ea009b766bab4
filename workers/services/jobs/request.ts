import type { JobKind, JobParams } from "@db/schema";
import { z } from "@hono/zod-openapi";
import { designStyleCode, QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES, ROOM_TYPES, SKY_TYPES } from "~/shared/catalog";
import { MAX_VARIATIONS, VARIATIONS_MESSAGE } from "~/shared/listing";
import { MASK_ID_PATTERN, MASK_MESSAGES } from "~/shared/masks";
import { fail, ok, type Result } from "~/shared/result";
import {
  ADVANCED_REFUSED_MESSAGE,
  COLOR_SCHEME_CODES,
  COLOR_SCHEMES,
  DEFAULT_CREATIVITY,
  PROMPT_MAX,
  planAllowsAdvanced,
  SPECIALITY_DECOR_CODES,
  SPECIALITY_DECORS,
} from "~/shared/staging-options";
import { hasControlCharacters } from "~/shared/text";

// A job request: the one contract of the page's JSON route (POST /api/photos/:id/jobs), the public API (which adds
// a callbackUrl, and documents the same fields in /api/v1/openapi.json) and a batch's photos (one style for all, a
// room each, the same choices). The schema checks the shape; jobChoices turns a request into a job's kind and
// provider parameters, with the spec's messages. docs/decisions/0154-the-user-objects-parts.md

export const MISSING_OPTIONS = "Please select all required options";
export const INVALID_SKY_TYPE = "Invalid sky type";
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

/** Any JSON object: the body of a route whose service reads its own fields (a batch, a re-roll). */
export const anyObject = z.record(z.string(), z.unknown(), { message: "The request body must be a JSON object." });
export type Choices = Pick<JobRequest, keyof typeof stagingChoices>;
type AdvancedParams = Pick<JobParams, "colorScheme" | "specialityDecor" | "designCreativity" | "prompt">;

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

/** The job's kind and provider parameters from a checked request, or the spec's message. */
export function jobParams(r: Pick<JobRequest, "kind" | "roomType" | "designStyle" | "skyType">) {
  const params: JobParams = {};
  if (r.kind === "stage") {
    const room = r.roomType?.trim() ? roomCode(r.roomType) : undefined;
    if (!room || !r.designStyle?.trim()) return fail("invalid", MISSING_OPTIONS);
    params.roomType = room;
    params.designStyle = styleCode(r.designStyle);
  } else if (r.kind === "sky") {
    if (!r.skyType) return fail("invalid", MISSING_OPTIONS);
    params.skyType = r.skyType;
  }
  return ok({ kind: r.kind as JobKind, params });
}

/** The advanced choices asked for (only what differs from the provider's defaults), or why the plan refuses them. */
export async function advancedOptions(
  c: Choices,
  plan: () => Promise<string | null>,
): Promise<Result<{ options: AdvancedParams }>> {
  const options: AdvancedParams = {};
  if (c.colorScheme && c.colorScheme !== "COLOR_SCHEME_0") options.colorScheme = c.colorScheme;
  if (c.specialityDecor && c.specialityDecor !== "SPECIALITY_DECOR_0") options.specialityDecor = c.specialityDecor;
  if (c.designCreativity !== undefined && c.designCreativity !== DEFAULT_CREATIVITY)
    options.designCreativity = c.designCreativity;
  if (c.prompt) options.prompt = c.prompt;
  if (Object.keys(options).length > 0 && !planAllowsAdvanced(await plan())) {
    return fail("forbidden", ADVANCED_REFUSED_MESSAGE);
  }
  return ok({ options });
}

/** How many results a request asks for (1 when not given), or why not. */
export function variationsOf(r: Pick<JobRequest, "kind" | "variations">): Result<{ count: number }> {
  const n = r.variations === undefined ? 1 : Number(r.variations);
  if (!Number.isInteger(n) || n < 1 || n > MAX_VARIATIONS) return fail("invalid", VARIATIONS_MESSAGE);
  if (r.kind !== "stage" && n !== 1) return fail("invalid", "Variations are for staging only.");
  return ok({ count: n });
}
