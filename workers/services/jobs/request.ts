import type { JobKind, JobParams } from "@db/schema";
import { z } from "@hono/zod-openapi";
import type { JobRequest, stagingChoices } from "~/shared/job-request";
import { MAX_VARIATIONS, VARIATIONS_MESSAGE } from "~/shared/listing";
import { fail, ok, type Result } from "~/shared/result";
import { roomCode, styleCode } from "~/shared/staging-codes";
import {
  ADVANCED_REFUSED_MESSAGE,
  DEFAULT_CREATIVITY,
  MISSING_OPTIONS,
  planAllowsAdvanced,
} from "~/shared/staging-options";

// A job request as the server reads it: its shape is app/shared/job-request.ts (the page's JSON route, the public API,
// a batch's photos); here a request becomes a job's kind and provider parameters, with the spec's messages. docs/decisions/0154-the-user-objects-parts.md

/** Any JSON object: the body of a route whose service reads its own fields (a batch, a re-roll). */
export const anyObject = z.record(z.string(), z.unknown(), { message: "The request body must be a JSON object." });
export type Choices = Pick<JobRequest, keyof typeof stagingChoices>;
type AdvancedParams = Pick<JobParams, "colorScheme" | "specialityDecor" | "designCreativity" | "prompt">;

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
