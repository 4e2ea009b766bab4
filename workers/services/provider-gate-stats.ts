import { type GateStats, providerGate } from "@workers/objects/client";

// The provider gate as the operations page reads it (docs/decisions/0186-one-provider-gate.md): the cap, the slots
// in use, and the requests waiting per user. A read only: it grants and releases nothing.

export type { GateStats };

export async function providerGateStats(env: Pick<Env, "PROVIDER_GATE">): Promise<GateStats> {
  const stats = await providerGate(env).stats();
  return {
    cap: stats.cap,
    inUse: stats.inUse,
    waiting: stats.waiting,
    waitingByUser: { ...stats.waitingByUser },
    inUseByUser: { ...stats.inUseByUser },
    oldestWaitMs: stats.oldestWaitMs,
  };
}
