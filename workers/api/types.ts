import type { Database } from "@db/client";
import type { CurrentUser } from "@workers/services/current-user";

export interface ApiEnv {
  Bindings: Env;
  Variables: { db: Database; user: CurrentUser | null };
}
