import type { CurrentUser } from "@workers/services/current-user";
import type { Deps } from "@workers/services/request-deps";

export interface ApiEnv {
  Bindings: Env;
  Variables: { db: Deps["db"]; deps: Deps; user: CurrentUser | null };
}
