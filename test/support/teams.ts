import { env } from "cloudflare:workers";
import { folders, teamMembers, teams } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { teamObject } from "@workers/objects/client";
import { db } from "./factories";

// Teams for the workerd tests (issue 47): a team with its owner, members, a pool granted through the team's
// object (so its ledger is exact), and a listing that belongs to it.

export async function makeTeam(ownerId: string, opts: { credits?: number; seats?: number; name?: string } = {}) {
  const id = randomToken();
  const now = Date.now();
  await db.batch([
    db.insert(teams).values({
      id,
      name: opts.name ?? "Harbor Realty",
      ownerId,
      seats: opts.seats ?? 25,
      periodStart: now,
      createdAt: now,
      updatedAt: now,
    }),
    db.insert(teamMembers).values({ teamId: id, userId: ownerId, role: "owner", joinedAt: now }),
  ]);
  if (opts.credits) await grantPool(id, opts.credits);
  return id;
}

export async function grantPool(teamId: string, amount: number) {
  const done = await teamObject(env, teamId).grant(teamId, {
    amount,
    key: `test-grant:${randomToken()}`,
    reason: "Test credits",
    actorId: null,
  });
  if (!done.ok) throw new Error(done.error);
}

export async function addMember(teamId: string, userId: string, role: "team_admin" | "agent" = "agent") {
  await db.insert(teamMembers).values({ teamId, userId, role, joinedAt: Date.now() });
}

/** A listing (folder) that belongs to the team, made by `userId`. */
export async function teamFolder(teamId: string, userId: string): Promise<string> {
  const id = randomToken();
  await db.insert(folders).values({ id, userId, teamId, name: "14 Harbor View", createdAt: Date.now() });
  return id;
}
