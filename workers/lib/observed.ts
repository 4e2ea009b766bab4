import { reporterFor } from "./error-reporting";
import { log, newRequestId, withLogContext } from "./log";

// The one wrapper every entry point runs its work in (the Worker's fetch and scheduled, the objects' alarms, a job's
// run): a log context with a request id, and a reporter for unexpected errors when SENTRY_DSN is set. An error that
// escapes `fn` is logged (and so reported) once here, then thrown on as before.

export interface Entry {
  where: string;
  requestId?: string | null;
  userId?: string;
  jobId?: string;
}

export function observed<T>(
  env: { SENTRY_DSN?: string; SENTRY_ENVIRONMENT?: string; SENTRY_RELEASE?: string; APP_ENV?: string },
  waitUntil: (p: Promise<unknown>) => void,
  entry: Entry,
  fn: () => Promise<T>,
): Promise<T> {
  const context = {
    requestId: entry.requestId ?? newRequestId(),
    userId: entry.userId,
    jobId: entry.jobId,
    report: reporterFor(env, waitUntil),
  };
  return withLogContext(context, async () => {
    try {
      return await fn();
    } catch (err) {
      log.error(`${entry.where} failed`, { err, where: entry.where });
      throw err;
    }
  });
}
