import type { Database } from "@db/client";
import { sessions } from "@db/schema";
import { purgeEmailTokens } from "@workers/services/accounts/tokens";
import { lte } from "drizzle-orm";

/** Daily cron: drop sessions and e-mail links that can no longer be used. */
export async function purgeExpiredSessions(db: Database, now = Date.now()): Promise<void> {
  await db.delete(sessions).where(lte(sessions.expiresAt, now));
  await purgeEmailTokens(db, now);
}
