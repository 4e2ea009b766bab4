import { log } from "../lib/log";
import {
  type Checked,
  type CheckRequest,
  type CheckTiming,
  isPrepareRequest,
  STALE_CHECK_MS,
  UNCHECKED,
} from "../lib/structure/verdict";
import type { UserObject } from "../objects/user-object";
import { probeImages } from "./health";
import { type ImagesWork, type JudgeEnv, judge, prepareSource } from "./judge";

// The check Worker: a script of its own (workers/checker/wrangler.toml), the consumer of the STRUCTURE_CHECKS queue.
// It judges each result against the picture its job started from and answers the user's object by RPC, so the
// decoding, reducing and comparing never hold that user's object (docs/decisions/0188-the-check-off-the-object.md).
// A consumer in the app's own script could run in the objects' isolate; a service binding runs on its caller's
// thread: a queue consumer in its own script runs on neither. The same queue carries a job's source to reduce while
// the provider works on it (docs/decisions/0322-source-reduced-beside-the-provider-call.md): kept, answering nobody.

export interface CheckerEnv extends JudgeEnv {
  USER_OBJECT: DurableObjectNamespace<UserObject>;
}

export default {
  /**
   * The deep health probe's way in (docs/decisions/0262-unchecked-results-seen.md): reached only through the app's
   * service binding (CHECKER; this Worker has no public address). GET /health reduces a tiny picture through the
   * Images binding, the step every check takes, and answers what it saw.
   */
  async fetch(request: Request, env: CheckerEnv): Promise<Response> {
    if (new URL(request.url).pathname !== "/health") return new Response("Not found", { status: 404 });
    const images = await probeImages(env);
    return Response.json({ ok: images === "ok", images }, { status: images === "ok" ? 200 : 503 });
  },

  // A batch holds the checks sent while the one before was judged (at most max_batch_size, workers/checker/
  // wrangler.toml): all judged at once, each answered and acknowledged on its own, so no check waits for another of
  // its batch (docs/decisions/0240-a-listing-at-the-providers-pace.md).
  async queue(batch: MessageBatch<unknown>, env: CheckerEnv): Promise<void> {
    await Promise.all(batch.messages.map((message) => checkOne(env, message)));
  },
} satisfies ExportedHandler<CheckerEnv>;

async function checkOne(env: CheckerEnv, message: Message<unknown>): Promise<void> {
  const sent = message.timestamp instanceof Date ? message.timestamp.getTime() : Date.now();
  if (Date.now() - sent > STALE_CHECK_MS) {
    log.warn("structure check: dropped, nobody waits for it any more", { id: message.id });
    message.ack();
    return;
  }
  if (isPrepareRequest(message.body)) {
    await prepareSafely(env, message.body.sourceKey);
    message.ack();
    return;
  }
  const request = asRequest(message.body);
  if (!request) {
    // Not ours to judge: dropped (a retry could not make it one).
    log.warn("structure check: a message that is not a check", { id: message.id });
    message.ack();
    return;
  }
  // The check's own times go back with its answer: the job records where its time went (jobs/clock.ts).
  const receivedAt = Date.now();
  await delayForTesting(env, request);
  const images: ImagesWork = { start: receivedAt, end: receivedAt, calls: 0 };
  const checked = await judgeSafely(env, request, images);
  const timing: CheckTiming = {
    receivedAt,
    imagesStart: images.calls > 0 ? images.start : receivedAt,
    imagesEnd: images.calls > 0 ? images.end : receivedAt,
    imagesCalls: images.calls,
    judgedAt: Date.now(),
    ...(images.sourceAhead ? { sourceAhead: true } : {}),
  };
  try {
    const user = env.USER_OBJECT.get(env.USER_OBJECT.idFromName(request.userId));
    await user.structureChecked(request.checkId, checked, timing);
    message.ack();
  } catch (err) {
    // The object could not be reached: tried again (an answer nobody waits for any more is dropped there).
    log.warn(`structure check: answer not delivered: ${err instanceof Error ? err.message : String(err)}`);
    message.retry();
  }
}

/** Tests and development only: the check takes `delayMs` longer (a slow check, for the tests of a job's pace). */
async function delayForTesting(env: CheckerEnv, request: CheckRequest): Promise<void> {
  const testing = env.APP_ENV === "test" || env.APP_ENV === "development";
  const ms = request.delayMs;
  if (!testing || typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0) return;
  await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 10_000)));
}

/** A source reduced ahead (ADR 0322): any failure is only logged, and the check reduces the source itself. */
async function prepareSafely(env: CheckerEnv, sourceKey: string): Promise<void> {
  try {
    await prepareSource(env, sourceKey);
  } catch (err) {
    log.warn(`source not reduced ahead: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function judgeSafely(env: CheckerEnv, request: CheckRequest, images: ImagesWork): Promise<Checked> {
  try {
    return await judge(env, request, images);
  } catch (err) {
    log.warn(`structure check not run: ${err instanceof Error ? err.message : String(err)}`, {
      checkId: request.checkId,
    });
    return { ...UNCHECKED, cause: "failed" };
  }
}

const KINDS = new Set(["stage", "removal", "sky"]);

function asRequest(body: unknown): CheckRequest | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  const strings = ["checkId", "userId", "sourceKey", "resultKey"] as const;
  if (!strings.every((k) => typeof b[k] === "string" && (b[k] as string).length > 0)) return null;
  if (typeof b.kind !== "string" || !KINDS.has(b.kind)) return null;
  return b as unknown as CheckRequest;
}
