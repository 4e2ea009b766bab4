// The one way code outside workers/objects reaches a Durable Object: a typed
// stub per user for credits and jobs, the shared rate limiter and the provider
// gate. Services import from here, never from the object classes' modules.
import type { TeamObject } from "./team-object";
import type { UserObject } from "./user-object";

export type { GateStats } from "./provider-gate-object";
export { clientIp, peekLimit, RATE_LIMITED_MESSAGE, type RateRule, rateLimit } from "./rate-limiter";
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

// Reads of the state the user's object writes, and the shapes it takes: jobs
// and versions, and the subscription rules the billing pages share with it.
export {
  getJob,
  getVersion,
  isJobKind,
  type Job,
  type JobKind,
  type JobParams,
  jobView,
  jobWithVersion,
  listVersions,
  MAX_JOB_WAIT_MS,
  sourceVariant,
} from "./user/jobs/job-rows";
export { currentSubscription, LIVE_STATUSES } from "./user/payments/subscriptions";
export type { ApplyResult, PaymentEvent, PaymentFact } from "./user/payments/types";

export type TeamObjectStub = DurableObjectStub<TeamObject>;
export { keyPayer, payerKey } from "./team/payer";
export type { PoolAnswer, TeamReserve } from "./team/pool";
export { teamObject } from "./team-stub";
