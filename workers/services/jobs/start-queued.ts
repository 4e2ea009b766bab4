import type { Job, JobKind, JobParams } from "@db/schema";
import { keyedToken, randomToken } from "@workers/lib/crypto";
import { currentRequestId } from "@workers/lib/log";
import { userObject } from "@workers/objects/client";
import type { Deps } from "@workers/services/request-deps";
import { startPaidBy } from "@workers/services/teams/funding";
import { type FailureCode, fail, NOT_FOUND } from "~/shared/result";
import { newSeed } from "~/shared/staging-codes";

// Starting jobs through the user's queue (workers/objects/user/jobs/job-queue.ts, which
// orders them by the plan's priority): a new provider seed per staging job, and variations (one job
// and one credit per result, reserved together).
// docs/decisions/0140-batches-variations-rerolls.md

/** A start that found its request's jobs already started: the first of them (see StartManyInput.submitted). */
export function alreadyStarted(started: { ok: boolean; existing?: Job }): Job | null {
  return started.ok ? null : (started.existing ?? null);
}

/** The object's refusal as the service's failure: its code and words, and the balance it saw. */
export function startFailure(started: { code: FailureCode; error: string; balance: number }) {
  return { ...fail(started.code, started.error), credits: started.balance } as ReturnType<typeof fail>;
}

/**
 * What a submission key was sent with: a page's job request or re-roll (its Idempotency-Key header), the
 * new-batch form, or a batch's retry (its form, or the Idempotency-Key header of POST /api/batches/:id/retry).
 */
export type SubmissionScope = "page-job" | "reroll" | "batch" | "batch-retry" | "team-key-job" | "member-key-job";

/**
 * The ids of the `count` jobs a request starts: under its submission key, derived from it, so the same key from
 * the same person names the same jobs and the request sent again finds them (job-queue.ts, `submitted`); without one,
 * random. The public API's keyed jobs (idempotentJobId) are named apart, with a `k`.
 */
export function submittedJobIds(
  scope: SubmissionScope,
  userId: string,
  key: string | undefined,
  count: number,
): string[] {
  return Array.from({ length: count }, (_, i) =>
    key === undefined ? randomToken() : keyedToken(`${scope}-job`, userId, `${key}:${i}`),
  );
}

/**
 * Starts a job of `count` results (variations of one staging request): one
 * job and one credit per result, reserved together; the first is the group's
 * lead. Used by requestJob for every request made with a session. The object
 * checks the photo is the user's and out of the trash in the round trip that
 * reads the balance (objects/user/jobs/paid-photos.ts).
 */
export async function startQueued(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  /** `teamId`: the photo's team as the caller read it with the photo (services/teams/access.ts, photoAccess). */
  job: { photoId: string; kind: JobKind; params: JobParams; teamId: string | null },
  count: number,
  /** The request's submission key: a second sending starts nothing (see submittedJobIds). */
  submission?: string,
  /**
   * A team API key's job (docs/decisions/0295-team-api-keys.md): `userId` is the team's runner, the pool is charged
   * under the key's name, and a photo outside this team's listings is not found (never the runner's own credits).
   * A member's personal key on a team listing's photo (ADR 0270's amendment): `userId` is the member, `payer` too.
   */
  teamKey?: { teamId: string; payer: string; callback?: { url: string; apiKeyId: string } },
) {
  // A member's personal key (payer = the member) has its own namespace too: its Idempotency-Key is not a page's key.
  const ids = submittedJobIds(
    teamKey ? (teamKey.payer === userId ? "member-key-job" : "team-key-job") : "page-job",
    userId,
    submission,
    count,
  );
  const params: JobParams = job.kind === "stage" ? { ...job.params, seed: newSeed() } : job.params;
  if (count > 1) params.variations = count;
  const reason = count > 1 ? `AI ${job.kind} (variation of ${count})` : `AI ${job.kind}`;
  // A photo in a team's listing: the team's pool pays, taken first, before anything reaches the provider.
  const { teamId } = job;
  if (teamKey && teamId !== teamKey.teamId) {
    return { ok: false as const, code: NOT_FOUND.code, error: NOT_FOUND.error, balance: 0, params, ids, pool: null };
  }
  const { started, pool } = await startPaidBy(deps.env, teamId, teamKey?.payer ?? userId, ids, reason, () =>
    userObject(deps.env, userId).startJobs(userId, {
      requestId: currentRequestId(),
      jobs: ids.map((jobId) => ({
        jobId,
        photoId: job.photoId,
        kind: job.kind,
        params,
        cost: 1 as const,
        reason,
        groupId: count > 1 ? ids[0]! : null,
        teamId,
      })),
      submitted: submission !== undefined,
      ...(teamKey?.callback ? { callback: teamKey.callback } : {}),
    }),
  );
  return { ...started, params, ids, pool };
}
