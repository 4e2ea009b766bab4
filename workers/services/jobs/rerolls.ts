import type { Job, JobParams } from "@db/schema";
import { currentRequestId } from "@workers/lib/log";
import { freeRerollQuery, getJob, userObject } from "@workers/objects/client";
import { looksOf } from "@workers/services/jobs/looks";
import type { Deps } from "@workers/services/request-deps";
import { photoAccess } from "@workers/services/teams/access";
import { startPaidBy } from "@workers/services/teams/funding";
import { FREE_REROLL_MS, REROLL_PAID_MESSAGE } from "~/shared/listing";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { newSeed } from "~/shared/staging-codes";
import { TEAM_REROLL_MESSAGE } from "~/shared/teams";
import { alreadyStarted, startFailure, submittedJobIds } from "./start-queued";

// Re-rolls (docs/decisions/0140-batches-variations-rerolls.md): the same choices with a new seed, free once within
// 7 days of the staged result, a credit after that, the price said before anything starts. The free one is used
// once started, whatever became of it (docs/decisions/0201-the-free-re-roll-is-used-once-started.md).
// On a team listing's photo every re-roll is a team job paid from the pool, one credit, said first; any active member
// may re-roll a teammate's result, in their own object (docs/decisions/0297-team-keep-and-re-roll.md).

type Db = Deps["db"];

const PAID_REASON = "AI stage (re-roll)";

export interface RerollQuote {
  /** The staging job whose choices the re-roll repeats. */
  rootJobId: string;
  cost: 0 | 1;
  /** What it costs, and from where: the user's own credits, or the pool of the team whose listing holds the photo. */
  message: string;
}

/** What re-rolling a staged result costs, said before it starts. */
export async function rerollQuote(
  db: Db,
  userId: string,
  jobId: string,
  now: number,
): Promise<Result<{ quote: RerollQuote }>> {
  const quoted = await quoteWithRoot(db, userId, jobId, now);
  return quoted.ok ? ok({ quote: quoted.quote }) : quoted;
}

/** The quote and the staging job whose choices the re-roll repeats (reroll needs both; one read of each job). */
async function quoteWithRoot(
  db: Db,
  userId: string,
  jobId: string,
  now: number,
): Promise<Result<{ quote: RerollQuote; root: Job; owner: string; teamId: string | null }>> {
  const job = await getJob(db, jobId);
  if (!job) return NOT_FOUND;
  // The user's own job, or a teammate's on a team listing's photo; a removed member's own team job is gone with it.
  const scope = await photoAccess(db, userId, job.photoId);
  if (!scope || (job.userId !== userId && scope.teamId === null)) return NOT_FOUND;
  if (job.kind !== "stage" || job.status !== "succeeded")
    return fail("invalid", "Only a staged result can be re-rolled.");
  // One free re-roll per staging request: a re-roll of a re-roll, or of any variation of a request, counts
  // against the request's first job (its group's lead).
  const first = job.rerollOf ? await getJob(db, job.rerollOf) : job;
  const root = first?.groupId && first.groupId !== first.id ? await getJob(db, first.groupId) : first;
  if (!root) return NOT_FOUND;
  const { ownerId: owner, teamId } = scope;
  if (teamId !== null) {
    return ok({
      root,
      owner,
      teamId,
      quote: { rootJobId: root.id, cost: 1, message: TEAM_REROLL_MESSAGE },
    });
  }
  // Used once started, whatever became of it (refused by the structure check, failed, refunded): ADR 0201.
  const used = await freeRerollQuery(db, root.id).get();
  const free = !used && now - root.createdAt <= FREE_REROLL_MS;
  return ok({
    root,
    owner,
    teamId,
    quote: {
      rootJobId: root.id,
      cost: free ? 0 : 1,
      message: free ? "Re-roll free: the same choices with a new seed (once within 7 days)." : REROLL_PAID_MESSAGE,
    },
  });
}

/**
 * Re-rolls a staged result; a paid one starts only when the caller has agreed to its credit. With the page's
 * submission key (its Idempotency-Key header), the re-roll's job id comes from the key, and the same request sent
 * again (its answer lost on the way back) is answered with the job it started, charged once (ADR 0148).
 */
export async function reroll(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  jobId: string,
  opts: { acceptCharge: boolean; submission?: string; now?: number },
): Promise<Result<{ job: { id: string; status: string }; cost: 0 | 1; credits: number; replayed?: boolean }>> {
  const quoted = await quoteWithRoot(deps.db, userId, jobId, opts.now ?? Date.now());
  if (!quoted.ok) return quoted;
  const { quote, root, owner, teamId } = quoted;
  const [id] = submittedJobIds("reroll", userId, opts.submission, 1) as [string];
  // A free re-roll sent again finds itself quoted as paid (the first sending took the free one): when the key's job
  // exists, the user's object answers with it (or refuses a different request under the key) and charges nothing.
  if (quote.cost > 0 && !opts.acceptCharge && !(opts.submission && (await getJob(deps.db, id))?.userId === userId)) {
    return fail("conflict", quote.message);
  }
  // The same choices, with the listing's look as it is now (set since, changed or cleared: docs/decisions/0190).
  const { variations: _v, styleReference: _r, ...choices } = root.params;
  const look = (await looksOf(deps.db, owner, [root.photoId])).get(root.photoId);
  const params: JobParams = look ? { ...choices, styleReference: look } : choices;
  // A team listing's photo: the pool's credit is taken first (ADR 0270's reserve: the member's limit, the frozen pool,
  // the pool itself), then the job is recorded in the member's object with the team named, as any team job (ADR 0297).
  const start = (cost: 0 | 1) =>
    userObject(deps.env, userId).startJobs(userId, {
      requestId: currentRequestId(),
      jobs: [
        {
          jobId: id,
          photoId: root.photoId,
          kind: "stage",
          params: { ...params, seed: newSeed() },
          cost,
          reason: cost === 0 ? "Free re-roll (same choices, new seed)" : PAID_REASON,
          rerollOf: root.id,
          teamId,
        },
      ],
      submitted: opts.submission !== undefined,
    });
  let cost = quote.cost;
  // The team's credit taken first, given back if the member's object does not record the job (startPaidBy). A team
  // re-roll is never free, so the second start below is only ever a personal one.
  let { started } = await startPaidBy(deps.env, teamId, userId, [id], PAID_REASON, () => start(cost));
  // A second free re-roll racing the first is refused by the object in the words of REROLL_PAID_MESSAGE (nothing
  // written): free for one of them only. One whose sender agreed to a credit starts as the paid re-roll it agreed to.
  if (!started.ok && started.error === REROLL_PAID_MESSAGE && cost === 0 && opts.acceptCharge) {
    cost = 1;
    started = await start(cost);
  }
  const existing = alreadyStarted(started);
  if (existing) {
    return ok({
      job: { id: existing.id, status: existing.status },
      cost: existing.cost === 0 ? 0 : 1,
      credits: started.balance,
      replayed: true,
    });
  }
  if (!started.ok) return startFailure(started);
  return ok({ job: { id, status: "queued" }, cost, credits: started.balance });
}
