import type { Database } from "../../db/client";
import type { CurrentUser } from "../services/current-user";

export interface ApiEnv {
  Bindings: Env;
  Variables: { db: Database; user: CurrentUser | null };
}
