// The way code outside workers/objects reaches a Durable Object: a typed stub per user for credits and jobs, the
// team's stub and the provider gate. Services import from here, never from the object classes' modules. The rate
// limiter (workers/objects/limits-client.ts) and the billing rules (workers/objects/billing-client.ts) have barrels
// of their own, so that a staging job's way in loads neither.
import type { TeamObject } from "./team-object";
import type { UserObject } from "./user-object";

export type { GateStats } from "./provider-gate-object";
export { INSUFFICIENT_CREDITS } from "./user/credits/ledger-rows";
export {
  ALREADY_RETRIED,
  freeRerollQuery,
  JOBS_ALREADY_STARTED,
  type QueuedJobInput,
  type StartManyInput,
  type StartManyResult,
  SUBMISSION_REUSED,
} from "./user/jobs/job-queue";
export { IDEMPOTENCY_TTL_MS, idempotentJobId, KEY_MISMATCH } from "./user/jobs/keyed-jobs";
export { providerGate } from "./user/jobs/slots";
export type { LiveBalance } from "./user-object";

export type UserObjectStub = DurableObjectStub<UserObject>;

/** The user's Durable Object: every change to their credits and every job of theirs runs there. */
export function userObject(env: Pick<Env, "USER_OBJECT">, userId: string): UserObjectStub {
  return env.USER_OBJECT.get(env.USER_OBJECT.idFromName(userId));
}

// Reads of the state the user's object writes, and the shapes it takes: jobs and versions.
export {
  chosenVersionValues,
  getJob,
  getVersion,
  isJobKind,
  type Job,
  type JobKind,
  type JobParams,
  type JobWithVersion,
  jobView,
  jobWithVersion,
  listVersions,
  MAX_JOB_WAIT_MS,
  sourceVariant,
} from "./user/jobs/job-rows";

export type TeamObjectStub = DurableObjectStub<TeamObject>;
export type { PoolAnswer, TeamReserve } from "./team/pool";
export { teamObject } from "./team-stub";
