import { log } from "../lib/log";
import { type Checked, type CheckRequest, UNCHECKED } from "../lib/structure/verdict";
import type { UserObject } from "../objects/user-object";
import { probeImages } from "./health";
import { type JudgeEnv, judge } from "./judge";

// The check Worker: a script of its own (workers/checker/wrangler.toml), the consumer of the STRUCTURE_CHECKS queue.
// It judges each result against the picture its job started from and answers the user's object by RPC, so the
// decoding, reducing and comparing never hold that user's object (docs/decisions/0188-the-check-off-the-object.md).
// A consumer in the app's own script could run in the objects' isolate; a service binding runs on its caller's
// thread: a queue consumer in its own script runs on neither.

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

  async queue(batch: MessageBatch<unknown>, env: CheckerEnv): Promise<void> {
    for (const message of batch.messages) {
      const request = asRequest(message.body);
      if (!request) {
        // Not ours to judge: dropped (a retry could not make it one).
        log.warn("structure check: a message that is not a check", { id: message.id });
        message.ack();
        continue;
      }
      const checked = await judgeSafely(env, request);
      try {
        const user = env.USER_OBJECT.get(env.USER_OBJECT.idFromName(request.userId));
        await user.structureChecked(request.checkId, checked);
        message.ack();
      } catch (err) {
        // The object could not be reached: tried again (an answer nobody waits for any more is dropped there).
        log.warn(`structure check: answer not delivered: ${err instanceof Error ? err.message : String(err)}`);
        message.retry();
      }
    }
  },
} satisfies ExportedHandler<CheckerEnv>;

async function judgeSafely(env: CheckerEnv, request: CheckRequest): Promise<Checked> {
  try {
    return await judge(env, request);
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
