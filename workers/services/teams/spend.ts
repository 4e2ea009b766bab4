import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { apiKeys, folders, jobs, photos, photoVersions, teamLedger, users } from "@db/schema";
import { and, eq, gte, inArray, lt, sql } from "drizzle-orm";
import { ok, type Result } from "~/shared/result";
import { csvCell, parseRange } from "./record";
import { requireTeamRole } from "./teams";

// What the team's pool paid for, per member and per listing, over a date range (issue 47 item 3; docs/decisions/
// 0312-team-spend-export.md), read from the pool's own ledger: a credit taken (`reserve`), given back by a job that
// failed or was refused (`release`) or returned afterwards ("This result changed the room", `refund`).

export interface SpendLine {
  /** The member's name at export time, or "API key <name>" for a team key (ADR 0295). */
  member: string;
  email: string;
  /** The listing the photo is in now; a photo deleted for good since is "(photo deleted)". */
  listing: string;
  charged: number;
  returned: number;
}

const NO_LISTING = "(photo deleted)";

/** The photo a ledger row is about: a job's, a kept version's (`keep:<version>`) or a returned one's (`return:<version>`). */
const versionOf = sql<string | null>`CASE
  WHEN ${teamLedger.jobId} LIKE 'keep:%' THEN substr(${teamLedger.jobId}, 6)
  WHEN ${teamLedger.idempotencyKey} LIKE 'return:%' THEN substr(${teamLedger.idempotencyKey}, 8)
END`;

/** The pool's spending in [from, to), one line per member and listing, members and listings by name. */
export async function teamSpend(
  db: Database,
  teamId: string,
  range: { from: number; to: number },
): Promise<SpendLine[]> {
  const rows = await db
    .select({
      memberId: teamLedger.memberId,
      kind: teamLedger.kind,
      amount: teamLedger.amount,
      listing: folders.name,
    })
    .from(teamLedger)
    .leftJoin(jobs, eq(jobs.id, teamLedger.jobId))
    .leftJoin(photoVersions, eq(photoVersions.id, versionOf))
    .leftJoin(photos, eq(photos.id, sql`coalesce(${jobs.photoId}, ${photoVersions.photoId})`))
    .leftJoin(folders, eq(folders.id, photos.folderId))
    .where(
      and(
        eq(teamLedger.teamId, teamId),
        inArray(teamLedger.kind, ["reserve", "release", "refund"]),
        gte(teamLedger.createdAt, range.from),
        lt(teamLedger.createdAt, range.to),
      ),
    )
    .all();
  const spenders = [...new Set(rows.map((r) => r.memberId ?? ""))];
  const names = await spenderNames(db, spenders);
  const lines = new Map<string, SpendLine>();
  for (const r of rows) {
    const who = names.get(r.memberId ?? "") ?? { member: "(unknown)", email: "" };
    const listing = r.listing ?? NO_LISTING;
    const key = `${r.memberId}\u0000${listing}`;
    const line = lines.get(key) ?? { ...who, listing, charged: 0, returned: 0 };
    if (r.kind === "reserve") line.charged += -r.amount;
    else line.returned += r.amount;
    lines.set(key, line);
  }
  return [...lines.values()].sort(
    (a, b) => a.member.localeCompare(b.member) || a.email.localeCompare(b.email) || a.listing.localeCompare(b.listing),
  );
}

/** Members by user id, team keys (`key:<id>`) by the key's name. */
async function spenderNames(db: Database, ids: string[]): Promise<Map<string, { member: string; email: string }>> {
  const userIds = ids.filter((id) => id && !id.startsWith("key:"));
  const keyIds = ids.filter((id) => id.startsWith("key:")).map((id) => id.slice(4));
  const [people, keys] = await Promise.all([
    userIds.length
      ? db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inList(users.id, userIds))
      : Promise.resolve([]),
    keyIds.length
      ? db.select({ id: apiKeys.id, name: apiKeys.name }).from(apiKeys).where(inList(apiKeys.id, keyIds))
      : Promise.resolve([]),
  ]);
  const out = new Map<string, { member: string; email: string }>();
  for (const p of people) {
    // A deleted account keeps its rows under the name it has now, and no address.
    out.set(p.id, { member: p.name || p.email, email: p.email.endsWith("@deleted.invalid") ? "" : p.email });
  }
  for (const k of keys) out.set(`key:${k.id}`, { member: `API key ${k.name}`, email: "" });
  return out;
}

const COLUMNS = ["member", "email", "listing", "credits charged", "credits returned", "net"];

export function spendCsv(lines: SpendLine[]): string {
  const body = lines.map((l) =>
    [l.member, l.email, l.listing, l.charged, l.returned, l.charged - l.returned].map(csvCell).join(","),
  );
  return `${[COLUMNS.join(","), ...body].join("\r\n")}\r\n`;
}

/** The spend export for owner and team admins (an agent 403, anyone else 404, ADR 0271); the range is required. */
export async function readTeamSpend(
  db: Database,
  teamId: string,
  userId: string,
  query: URLSearchParams,
): Promise<Result<{ lines: SpendLine[]; range: { from: string; to: string } }>> {
  const found = await requireTeamRole(db, teamId, userId, "manage");
  if (!found.ok) return found;
  const from = query.get("from") ?? "";
  const to = query.get("to") ?? "";
  const range = parseRange(from, to);
  if (!range.ok) return range;
  return ok({ lines: await teamSpend(db, teamId, range), range: { from, to } });
}
