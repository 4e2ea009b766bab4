import type { Database } from "@db/client";
import { photoVersions, structureRecourses } from "@db/schema";
import type { Stmt } from "@workers/objects/user/batch";
import { and, eq, isNull } from "drizzle-orm";

// The user's side of a return ("This result changed the room", docs/decisions/0261-this-result-changed-the-room.md):
// the recourse row (once per version: its primary key) and the version marked returned. Written in the batch that
// gives the credit back: the user's ledger's for a personal job (credits/returns.ts), the team's pool's for a team
// job (team/pool.ts, `returnCredit`), so a version is never marked returned without its credit, nor credited twice.

/** What the user's object decided, passed as plain data (over RPC to the team's object for a team job). */
export interface RecourseRow {
  versionId: string;
  userId: string;
  photoId: string;
  kind: string;
  verdict: string;
  score: number | null;
  candidatePrefix: string | null;
  /** The user's object's clock: what the month's count of returns reads. */
  createdAt: number;
}

export function recourseWrites(db: Database, r: RecourseRow): Stmt[] {
  return [
    db.insert(structureRecourses).values(r),
    db
      .update(photoVersions)
      .set({ structureReturnedAt: r.createdAt })
      .where(and(eq(photoVersions.id, r.versionId), isNull(photoVersions.structureReturnedAt))),
  ];
}
