import { lte } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessions } from "../../db/schema";

/** Daily cron: drop sessions that can no longer be used. */
export async function purgeExpiredSessions(db: Database, now = Date.now()): Promise<void> {
  await db.delete(sessions).where(lte(sessions.expiresAt, now));
}
