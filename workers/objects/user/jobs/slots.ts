import type { Job } from "@db/schema";
import { RESULT_DOWNLOAD_TIMEOUT_MS } from "@workers/adapters/provider";
import type { ProviderGate } from "@workers/objects/provider-gate-object";
import { JOB_WATCH_MARGIN_MS, providerTimeoutMs } from "./job-rows";

// A job's slot at the provider gate (workers/objects/provider-gate-object.ts): taken before the job is marked running,
// so the job shows as queued while it waits and its provider timeout starts only once it holds the slot; held through
// the attempt's provider work (its call, the result's download, the enlargement) and released before the structure
// check and the commit. The check's free second try takes a slot of its own. A group of variations holds its slot
// until the group is settled (its calls and checks alternate). docs/decisions/0186-one-provider-gate.md

/** The one gate of the product. */
export const GATE_NAME = "global";

export function providerGate(env: Pick<Env, "PROVIDER_GATE">): DurableObjectStub<ProviderGate> {
  return env.PROVIDER_GATE.get(env.PROVIDER_GATE.idFromName(GATE_NAME));
}

/**
 * How long a slot lasts when its holder never gives it back (its object crashed): long enough for a group of
 * variations' two attempts, each its call, its result's download (tried twice) and the enlargements, which end by
 * the job's deadline.
 */
export function leaseMsFor(env: Pick<Env, "PROVIDER_TIMEOUT_MS">): number {
  return 2 * (providerTimeoutMs(env) + 2 * RESULT_DOWNLOAD_TIMEOUT_MS + JOB_WATCH_MARGIN_MS);
}

export interface Slot {
  /** How long the job waited at the gate. */
  waitedMs: number;
  release(): Promise<void>;
}

/** Waits for a slot for `job`. Throws when the gate cannot be reached (the job stays queued; the alarm retries). */
export async function takeSlot(
  env: Env,
  userId: string,
  job: Pick<Job, "id" | "priority">,
  /** This instance of the user's object (random per start): the gate then drops its predecessors' leases. */
  instance: string,
): Promise<Slot> {
  const gate = providerGate(env);
  // The gate asks before it answers: a slot granted after this wait gave up (the call failed) goes back at once,
  // and one granted to an instance that is gone finds no function to call and goes back as well.
  let waiting = true;
  const granted = await gate
    .acquire({ userId, holder: job.id, priority: job.priority, leaseMs: leaseMsFor(env), instance }, () => waiting)
    .finally(() => {
      waiting = false;
    });
  let released = false;
  return {
    waitedMs: granted.waitedMs,
    async release() {
      if (released) return;
      released = true;
      try {
        await gate.release(granted.leaseId);
      } catch (err) {
        // The lease expires on its own; until then the gate counts one call too many.
        console.warn(`provider slot not released (${granted.leaseId}): ${err instanceof Error ? err.message : err}`);
      }
    },
  };
}
