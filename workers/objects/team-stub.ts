import type { TeamObject } from "./team-object";

// The team's Durable Object as its callers reach it: a stub, with the class only as a type, so a caller's imports
// stop at the RPC boundary (a personal job's path never loads the pool's code).

/** The team's Durable Object: the only writer of the team's credit pool (docs/decisions/0270-team-credit-pool.md). */
export function teamObject(env: Pick<Env, "TEAM_OBJECT">, teamId: string): DurableObjectStub<TeamObject> {
  return env.TEAM_OBJECT.get(env.TEAM_OBJECT.idFromName(teamId));
}
