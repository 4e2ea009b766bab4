// Fixture users through the dev-only endpoint, for the e2e tests and the bench
// (no vitest import here, so plain Node scripts can use it too).

export interface FixtureUser {
  id: string;
  email: string;
  sessionToken: string | null;
  /** An API key with both scopes, when asked for with `apiKey: true`. */
  apiKey?: string;
}

export interface FixtureOptions {
  email?: string;
  /** The account's name (the fixture endpoint takes it; the part before @ otherwise). */
  name?: string;
  password?: string;
  verified?: boolean;
  role?: "user" | "admin";
  credits?: number;
  /** A plan's display name, e.g. "Starter plan" (what the plan unlocks; no credits come with it). */
  plan?: string;
  session?: boolean;
  expiredSession?: boolean;
  apiKey?: boolean;
}

/** Users made since the last takeCreatedUsers(), with the stack that made them. */
const created: { baseUrl: string; id: string }[] = [];

/** Creates a user on the running stack at `baseUrl`; with a session unless `session: false`. */
export async function createFixtureUser(baseUrl: string, opts: FixtureOptions = {}): Promise<FixtureUser> {
  const res = await fetch(`${baseUrl}/api/dev/users`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(opts),
  });
  if (res.status !== 201) throw new Error(`fixture user: ${res.status} ${await res.text()}`);
  const user = (await res.json()) as FixtureUser;
  created.push({ baseUrl, id: user.id });
  return user;
}

/** Hands over (and forgets) the users made so far, for removeFixtureUsers. */
export function takeCreatedUsers(): { baseUrl: string; id: string }[] {
  return created.splice(0);
}

/** Removes users with their photos (DELETE /api/dev/users/:id); one already gone is fine. */
export async function removeFixtureUsers(list: { baseUrl: string; id: string }[]): Promise<void> {
  for (const { baseUrl, id } of list) {
    const res = await fetch(`${baseUrl}/api/dev/users/${encodeURIComponent(id)}`, {
      method: "DELETE",
      headers: { Origin: baseUrl },
    });
    await res.body?.cancel();
    if (res.status !== 200 && res.status !== 404) throw new Error(`removing fixture user ${id}: ${res.status}`);
  }
}
