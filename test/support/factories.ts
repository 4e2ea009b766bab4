import { env } from "cloudflare:workers";
import { createDb } from "@db/client";
import { createFixtureUser } from "@workers/services/fixtures";
import { createSession } from "@workers/services/sessions";

export const db = createDb(env.DB);

/** A user made by the same service as POST /api/dev/users (a cheap password hash, no session). */
export async function makeUser(
  opts: { email?: string; password?: string; verified?: boolean; role?: "user" | "admin"; credits?: number } = {},
) {
  const { id, email } = await createFixtureUser(
    { db, env },
    { ...opts, session: false },
    {
      emailPrefix: "user",
      hashIterations: 1000,
    },
  );
  return { id, email };
}

/** A signed-in user and the Cookie header that carries their session. */
export async function signedIn(opts: Parameters<typeof makeUser>[0] = {}) {
  const user = await makeUser(opts);
  const { token } = await createSession(db, user.id, "vitest");
  return { ...user, cookie: `sw_session=${token}` };
}
