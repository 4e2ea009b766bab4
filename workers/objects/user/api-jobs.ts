import type { Database } from "@db/client";
import { apiIdempotency } from "@db/schema";
import { and, eq } from "drizzle-orm";
import { insertCallbackStatement, markOpen } from "./callbacks";
import { getJob, insertJobStatement, jobView, type StartJobInput } from "./jobs";
import * as ledger from "./ledger";

// Job creation for the public API, run inside the user's Durable Object so
// that retries with one Idempotency-Key wait for each other: the first one
// reserves the credit and stores its answer, every other one gets that answer
// (docs/decisions/0120-public-api.md). The job id comes from the key, and the
// reservation is keyed by the job id, so even a crash between the two writes
// cannot charge twice.

export interface ApiJobInput {
  job: StartJobInput;
  idempotency?: { key: string; hash: string };
  callback?: { url: string; apiKeyId: string };
}

export type ApiJobAnswer = { job: ReturnType<typeof jobView>; credits: number };

export type ApiJobResult =
  | { ok: true; answer: ApiJobAnswer; replayed: boolean; launch: boolean }
  | { ok: false; error: string; balance: number; mismatch?: boolean };

export async function start(
  db: Database,
  storage: DurableObjectStorage,
  userId: string,
  input: ApiJobInput,
  now: number,
): Promise<ApiJobResult> {
  const idem = input.idempotency;
  if (idem) {
    const row = await db
      .select()
      .from(apiIdempotency)
      .where(and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, idem.key)))
      .get();
    if (row) {
      if (row.requestHash !== idem.hash || row.response === null) {
        return { ok: false, error: "mismatch", balance: 0, mismatch: true };
      }
      return { ok: true, answer: JSON.parse(row.response) as ApiJobAnswer, replayed: true, launch: false };
    }
  }
  const also = [insertJobStatement(db, userId, input.job, now)];
  if (input.callback) {
    also.push(insertCallbackStatement(db, { jobId: input.job.jobId, userId, ...input.callback }, now));
  }
  const reserved = await ledger.reserve(db, userId, input.job.jobId, 1, `AI ${input.job.kind}`, now, also);
  if (!reserved.ok) return reserved;
  if (input.callback) await markOpen(storage);
  const job = await getJob(db, input.job.jobId);
  if (!job) return { ok: false, error: "The job could not be created.", balance: reserved.balance };
  const answer: ApiJobAnswer = { job: jobView(job), credits: reserved.balance };
  if (idem) {
    await db
      .insert(apiIdempotency)
      .values({
        userId,
        key: idem.key,
        requestHash: idem.hash,
        status: 202,
        response: JSON.stringify(answer),
        createdAt: now,
      })
      .onConflictDoNothing();
  }
  return { ok: true, answer, replayed: false, launch: reserved.status === "held" };
}
