import type { z } from "zod";
import { type Failure, fail, ok, type Result } from "~/shared/result";

// The one way a route reads a request body: every React Router action and
// every Hono route that takes a body goes through readForm(), readJson() or
// readBytes(). Each refuses before anything is written:
//   a method the route does not take      -> method_not_allowed (405)
//   a media type the route does not read  -> unsupported_media_type (415)
//   more bytes than the route's limit     -> too_large (413), counted as the bytes
//                                            arrive, so a chunked body is caught too
//   a body that does not parse            -> invalid (400)
//   fields that break the schema          -> invalid (400) with per-field messages
// None of them throws, so no malformed input can become a 500.

/** Forms and JSON calls are small; photo bytes go through the upload routes with their own limits. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;
/** After refusing an oversized body, read (and drop) up to this much so the client sees the 413, not a reset. */
const DRAIN_LIMIT = 16 * 1024 * 1024;

export interface BodyOptions {
  /** Largest body accepted, in bytes. */
  maxBytes?: number;
  /** Methods the route takes (default POST). */
  methods?: readonly string[];
  /** readJson only: a request with no body and no Content-Type reads as `{}` (e.g. a DELETE whose fields are optional). */
  optional?: boolean;
}

const MESSAGES = {
  method: (allowed: readonly string[]) => `This address takes ${allowed.join(" or ")} requests only.`,
  formType: "This form must be sent as a web form (application/x-www-form-urlencoded or multipart/form-data).",
  jsonType: "This endpoint takes a JSON body (Content-Type: application/json).",
  tooLarge: (max: number) => `The request body is larger than ${formatBytes(max)}.`,
  unreadable: "The request body could not be read.",
  badForm: "The form could not be read. Please reload the page and try again.",
  badJson: "The request body must be a JSON object.",
  invalid: "Please check the highlighted fields.",
};

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`;
}

export function checkMethod(request: Request, methods: readonly string[] = ["POST"]): Failure | null {
  return methods.includes(request.method.toUpperCase()) ? null : fail("method_not_allowed", MESSAGES.method(methods));
}

export async function drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  budget: number = DRAIN_LIMIT,
): Promise<void> {
  try {
    let seen = 0;
    while (seen < budget) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing to answer.
  }
}

/** The body's bytes, at most `maxBytes` of them, whether or not the client declared a length. */
export async function readBytes(
  request: Request,
  maxBytes: number,
): Promise<Result<{ bytes: Uint8Array<ArrayBuffer> }>> {
  const declared = request.headers.get("Content-Length");
  if (declared !== null && declared !== "") {
    const n = Number(declared);
    if (!Number.isSafeInteger(n) || n < 0) return fail("invalid", MESSAGES.unreadable);
    if (n > maxBytes) {
      if (request.body && !request.bodyUsed) await drain(request.body.getReader(), DRAIN_LIMIT);
      return fail("too_large", MESSAGES.tooLarge(maxBytes));
    }
  }
  if (!request.body) return ok({ bytes: new Uint8Array() });
  if (request.bodyUsed) return fail("invalid", MESSAGES.unreadable);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await drain(reader, DRAIN_LIMIT);
        return fail("too_large", MESSAGES.tooLarge(maxBytes));
      }
      chunks.push(value);
    }
  } catch {
    return fail("invalid", MESSAGES.unreadable);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return ok({ bytes });
}

function mediaType(request: Request): string {
  return (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** zod's issues as one message and a message per top-level field. */
export function schemaFailure<F extends string = string>(error: z.ZodError): Failure<F> {
  const fieldErrors: Partial<Record<F, string>> = {};
  for (const issue of error.issues) {
    const key = issue.path[0];
    if (typeof key === "string" && !(key in fieldErrors)) fieldErrors[key as F] = issue.message;
  }
  const first = error.issues[0];
  const error1 = first && first.path.length === 0 ? first.message : MESSAGES.invalid;
  return fail<F>(
    "invalid",
    Object.keys(fieldErrors).length === 1 ? Object.values<string>(fieldErrors as Record<string, string>)[0]! : error1,
    {
      fieldErrors,
    },
  );
}

export type Parsed<S extends z.ZodType> = Result<{ data: z.infer<S> }, string>;

export function checkFields<S extends z.ZodType>(schema: S, value: unknown): Parsed<S> {
  const parsed = schema.safeParse(value);
  return parsed.success ? ok({ data: parsed.data as z.infer<S> }) : schemaFailure(parsed.error);
}

/** The raw fields of a web form (text fields only; a file field is left out), or why there are none. */
export async function readFormFields(
  request: Request,
  options: BodyOptions = {},
): Promise<Result<{ fields: Record<string, string> }>> {
  const wrongMethod = checkMethod(request, options.methods);
  if (wrongMethod) return wrongMethod;
  const type = mediaType(request);
  const contentType = request.headers.get("Content-Type") ?? "";
  const multipart = type === "multipart/form-data";
  if (type !== "application/x-www-form-urlencoded" && !multipart)
    return fail("unsupported_media_type", MESSAGES.formType);
  if (multipart && !/;\s*boundary=/i.test(contentType)) return fail("invalid", MESSAGES.badForm);
  const body = await readBytes(request, options.maxBytes ?? DEFAULT_BODY_LIMIT);
  if (!body.ok) return body;
  const fields: Record<string, string> = {};
  try {
    if (multipart) {
      const form = await new Response(body.bytes, { headers: { "Content-Type": contentType } }).formData();
      for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
    } else {
      for (const [k, v] of new URLSearchParams(new TextDecoder().decode(body.bytes))) fields[k] = v;
    }
  } catch {
    return fail("invalid", MESSAGES.badForm);
  }
  return ok({ fields });
}

/** A web form's fields checked against `schema`. */
export async function readForm<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: BodyOptions = {},
): Promise<Parsed<S>> {
  const raw = await readFormFields(request, options);
  if (!raw.ok) return raw;
  return checkFields(schema, raw.fields);
}

/** A JSON body checked against `schema`. */
export async function readJson<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: BodyOptions = {},
): Promise<Parsed<S>> {
  const wrongMethod = checkMethod(request, options.methods);
  if (wrongMethod) return wrongMethod;
  const type = mediaType(request);
  if (options.optional && type === "" && (request.body === null || request.headers.get("Content-Length") === "0"))
    return checkFields(schema, {});
  if (type !== "application/json" && !type.endsWith("+json")) return fail("unsupported_media_type", MESSAGES.jsonType);
  const body = await readBytes(request, options.maxBytes ?? DEFAULT_BODY_LIMIT);
  if (!body.ok) return body;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes));
  } catch {
    return fail("invalid", MESSAGES.badJson);
  }
  return checkFields(schema, value);
}

/** A text body (e.g. a signed webhook, whose signature covers the exact bytes). */
export async function readText(request: Request, options: BodyOptions = {}): Promise<Result<{ text: string }>> {
  const wrongMethod = checkMethod(request, options.methods);
  if (wrongMethod) return wrongMethod;
  const body = await readBytes(request, options.maxBytes ?? DEFAULT_BODY_LIMIT);
  if (!body.ok) return body;
  try {
    return ok({ text: new TextDecoder("utf-8", { fatal: true }).decode(body.bytes) });
  } catch {
    return fail("invalid", MESSAGES.unreadable);
  }
}

/** A multipart/form-data body: its text fields and its files (e.g. a photo sent to the public API). */
export async function readMultipart(
  request: Request,
  options: BodyOptions = {},
): Promise<Result<{ fields: Record<string, string>; files: Record<string, File> }>> {
  const wrongMethod = checkMethod(request, options.methods);
  if (wrongMethod) return wrongMethod;
  const contentType = request.headers.get("Content-Type") ?? "";
  if (mediaType(request) !== "multipart/form-data") {
    return fail("unsupported_media_type", "This endpoint takes a multipart/form-data body.");
  }
  if (!/;\s*boundary=/i.test(contentType)) return fail("invalid", MESSAGES.badForm);
  const body = await readBytes(request, options.maxBytes ?? DEFAULT_BODY_LIMIT);
  if (!body.ok) return body;
  const fields: Record<string, string> = {};
  const files: Record<string, File> = {};
  try {
    const form = await new Response(body.bytes, { headers: { "Content-Type": contentType } }).formData();
    for (const [k, v] of form) {
      if (typeof v === "string") fields[k] = v;
      else if (!(k in files)) files[k] = v;
    }
  } catch {
    return fail("invalid", "The multipart body could not be read.");
  }
  return ok({ fields, files });
}
