import type { Database } from "@db/client";
import { apiIdempotency } from "@db/schema";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { type Refusal, refusal } from "@workers/objects/user/credits/ledger-rows";
import { planQuery } from "@workers/objects/user/credits/view";
import { and, eq } from "drizzle-orm";
import { markOpen } from "./callbacks";
import { getJob, insertCallbackStatement, insertJobStatement, jobView, type StartJobInput } from "./job-rows";
import { IDEMPOTENCY_TTL_MS, idempotentJobId, KEY_MISMATCH } from "./keyed-jobs";
import { checkPaidPhotos } from "./paid-photos";
import { limitsOf } from "./plan-limits";

// Job creation for the public API, run inside the user's Durable Object so
// that retries with one Idempotency-Key wait for each other: the first one
// reserves the credit and stores its answer, every other one gets that answer
// (docs/decisions/0120-public-api.md). The job id comes from the key and the
// key's generation (when its claim was written), and the reservation is keyed
// by the job id; the claim is written in the reservation's batch, so even a
// crash before the answer is stored cannot charge twice. Once the stored
// answer has expired (24 hours), the key starts a new generation: a new job,
// charged again (docs/decisions/0153-credentials-end-with-the-accounts-trust.md).

export interface ApiJobInput {
  job: StartJobInput;
  idempotency?: { key: string; hash: string };
  callback?: { url: string; apiKeyId: string };
}

export type ApiJobAnswer = { job: ReturnType<typeof jobView>; credits: number };

export type ApiJobResult = { ok: true; answer: ApiJobAnswer; replayed: boolean; launch: boolean } | Refusal;

export async function start(
  db: Database,
  storage: DurableObjectStorage,
  userId: string,
  input: ApiJobInput,
  now: number,
): Promise<Changed<ApiJobResult>> {
  const idem = input.idempotency;
  let jobInput = input.job;
  let generation = now;
  if (idem) {
    const keyRow = and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, idem.key));
    let row = await db.select().from(apiIdempotency).where(keyRow).get();
    if (row && row.createdAt < now - IDEMPOTENCY_TTL_MS) {
      // Its answer has expired: the key is free again, and names a new job.
      await db.delete(apiIdempotency).where(and(keyRow, eq(apiIdempotency.createdAt, row.createdAt)));
      row = undefined;
    }
    if (row) {
      if (row.requestHash !== idem.hash) return credits.untouched(refusal("conflict", KEY_MISMATCH, 0));
      if (row.response !== null) {
        const answer = JSON.parse(row.response) as ApiJobAnswer;
        return credits.untouched({ ok: true, answer, replayed: true, launch: false });
      }
      // Our own claim without its answer: a start that stopped after its reservation. Its generation names the
      // same job, whose reservation the ledger finds (nothing is charged again).
      generation = row.createdAt;
    }
    jobInput = { ...input.job, jobId: idempotentJobId(userId, idem.key, generation) };
  }
  // A new job (not an answer stored under its key): paid work only on the user's photo out of the trash.
  const photoRefused = await checkPaidPhotos(db, userId, [jobInput.photoId], 0);
  if (photoRefused) return credits.untouched(photoRefused);
  // The plan's queue priority, as the page's jobs get it (job-queue.ts): a Professional user's API jobs go first too.
  const plan = await planQuery(db, userId).get();
  jobInput = { ...jobInput, priority: limitsOf(plan?.plan).priority };
  const jobId = jobInput.jobId;
  const also = [insertJobStatement(db, userId, jobInput, now)];
  if (idem) {
    also.push(
      db
        .insert(apiIdempotency)
        .values({ userId, key: idem.key, requestHash: idem.hash, status: null, response: null, createdAt: generation })
        .onConflictDoNothing(),
    );
  }
  if (input.callback) {
    also.push(insertCallbackStatement(db, { jobId, userId, ...input.callback }, now));
  }
  const reservedChange = await credits.reserve(db, userId, jobId, 1, `AI ${jobInput.kind}`, now, { writes: also });
  const reserved = reservedChange.answer;
  const done = (answer: ApiJobResult): Changed<ApiJobResult> => ({ answer, effect: reservedChange.effect });
  if (!reserved.ok) return done(reserved);
  if (input.callback) await markOpen(storage);
  const job = await getJob(db, jobId);
  if (!job) return done(refusal("invalid", "The job could not be created.", reserved.balance));
  const answer: ApiJobAnswer = { job: jobView(job), credits: reserved.balance };
  if (idem) {
    await db
      .update(apiIdempotency)
      .set({ status: 202, response: JSON.stringify(answer) })
      .where(
        and(
          eq(apiIdempotency.userId, userId),
          eq(apiIdempotency.key, idem.key),
          eq(apiIdempotency.requestHash, idem.hash),
        ),
      );
  }
  return done({ ok: true, answer, replayed: false, launch: reserved.status === "held" });
}
