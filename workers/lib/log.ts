import { AsyncLocalStorage } from "node:async_hooks";

// One structured log line per event: a JSON object with the level, the event, the request id of the work it
// belongs to (the request, the cron run, or the request that queued a job), the user id when known, and the
// event's own fields. No personal data beyond the user id: fields are primitives chosen by the caller, and text
// that looks like an e-mail or an IP address is masked on the way out. docs/decisions/0183-errors-and-logs.md

export type LogValue = string | number | boolean | null | undefined;
/** A line's fields: primitives (anything else is left out of the line), and `err`, the error it is about. */
export type LogFields = { err?: unknown; [key: string]: unknown };

/** Who the current work is for; `report` sends an unexpected error to the error-reporting service. */
export interface LogContext {
  requestId: string;
  userId?: string;
  jobId?: string;
  report?: (err: unknown, context: ReportContext) => void;
}

export interface ReportContext {
  event: string;
  requestId?: string;
  userId?: string;
  jobId?: string;
  where?: string;
}

const store = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with this context (merged over the current one) for every line it logs and every error it reports. */
export function withLogContext<T>(context: Partial<LogContext>, fn: () => T): T {
  const current = store.getStore();
  return store.run({ requestId: newRequestId(), ...current, ...dropUndefined(context) }, fn);
}

export function currentLogContext(): LogContext | undefined {
  return store.getStore();
}

/** The id of the request (or cron run) the current work belongs to. */
export function currentRequestId(): string | undefined {
  return store.getStore()?.requestId;
}

/** Names the signed-in user once known, for the rest of the request. */
export function setLogUser(userId: string): void {
  const current = store.getStore();
  if (current) current.userId = userId;
}

export function newRequestId(): string {
  return crypto.randomUUID();
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const EMAIL = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[A-Za-z]{2,}/g;
const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}\b/g;

/** Masks what looks like an e-mail address or an IPv4 address (tokens never enter a log line: callers pass ids). */
export function scrub(text: string): string {
  return text.replace(EMAIL, "[email]").replace(IPV4, "[ip]");
}

function errorFields(err: unknown): Record<string, string> {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `${err.cause.name}: ${err.cause.message}` : undefined;
    return {
      error: scrub(`${err.name}: ${err.message}`),
      ...(err.stack ? { stack: scrub(err.stack.split("\n").slice(0, 8).join("\n")) } : {}),
      ...(cause ? { cause: scrub(cause) } : {}),
    };
  }
  return { error: scrub(String(err)) };
}

type Level = "info" | "warn" | "error";

/** The line as written: JSON, one object per line (kept separate so tests can read it). */
export function formatLine(level: Level, event: string, fields: LogFields = {}): string {
  const context = store.getStore();
  const { err, ...rest } = fields;
  const line: Record<string, LogValue> = {
    level,
    event: scrub(event),
    requestId: context?.requestId,
    userId: context?.userId,
    jobId: context?.jobId,
  };
  for (const [k, v] of Object.entries(rest)) {
    if (typeof v === "string") line[k] = scrub(v);
    else if (v === null || typeof v === "number" || typeof v === "boolean") line[k] = v;
  }
  if (err !== undefined) Object.assign(line, errorFields(err));
  return JSON.stringify(line);
}

function write(level: Level, event: string, fields?: LogFields): void {
  const text = formatLine(level, event, fields);
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else console.log(text);
}

export const log = {
  info(event: string, fields?: LogFields): void {
    write("info", event, fields);
  },
  warn(event: string, fields?: LogFields): void {
    write("warn", event, fields);
  },
  /** An unexpected error: logged, and reported (when error reporting is on) with the current request id. */
  error(event: string, fields: LogFields = {}): void {
    write("error", event, fields);
    const context = store.getStore();
    if (!context?.report) return;
    const where = typeof fields.where === "string" ? fields.where : undefined;
    context.report(fields.err ?? new Error(event), {
      event,
      requestId: context.requestId,
      userId: context.userId,
      jobId: context.jobId,
      where,
    });
  },
};
