import { teams } from "@db/schema";
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { db } from "./factories";
import { api, onPlan, photosOf, settleJob } from "./listing";
import type { ProviderStub } from "./provider-stub";
import { refuseOverOne, roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "./structure-room";
import { addMember, makeTeam, teamFolder } from "./teams";

// A team job's result for the workerd tests of what follows it (keep, re-roll, return, change map: ADR 0270, 0297,
// 0298): an owner with a pool, a member and a teammate (each on the Starter plan with `ownCredits` of their own), and
// one staging of the member's photo in the team's listing, run through the queue, the check Worker and both objects.

export async function stagedTeamJob(
  provider: ProviderStub,
  opts: { pool: number; ownCredits: number; answer: "passed" | "flagged" | "refused" },
) {
  const owner = await onPlan(null, 0);
  const teamId = await makeTeam(owner.id, { credits: opts.pool });
  const folderId = await teamFolder(teamId, owner.id);
  const member = await onPlan("Starter plan", opts.ownCredits);
  const mate = await onPlan("Starter plan", opts.ownCredits);
  await addMember(teamId, member.id);
  await addMember(teamId, mate.id);
  // Refused: the refusing limits of a test; flagged: the room changed under production's limits (ADR 0215).
  if (opts.answer === "refused") await refuseOverOne(member.id);
  const [photo] = await photosOf(member.id, 1, folderId);
  await useRoomAsOriginal(photo!);
  provider.answer = () => [opts.answer === "passed" ? roomAnswer("stage") : windowGoneAnswer("stage")];
  const res = await api(member.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
    kind: "stage",
    roomType: "Living Room",
    designStyle: "Modern",
  });
  expect(res.status).toBe(202);
  const job = await settleJob(member.cookie, res.body.job.id);
  // A refused result is delivered as the failed job's version, not charged (ADR 0162).
  expect(job.status).toBe(opts.answer === "refused" ? "failed" : "succeeded");
  const versionId: string = job.versionId!;
  return {
    owner,
    teamId,
    member,
    mate,
    photo: photo!,
    jobId: job.id as string,
    versionId,
    base: `/api/photos/${photo!.id}/versions/${versionId}`,
  };
}

/** The team's pool as its row caches it. */
export async function poolOf(teamId: string): Promise<number> {
  return (await db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)).get())!.credits;
}
