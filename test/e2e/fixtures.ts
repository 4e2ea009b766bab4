// Fixture users through the dev-only endpoint, for the e2e tests and the bench
// (no vitest import here, so plain Node scripts can use it too).

export interface FixtureUser {
  id: string;
  email: string;
  sessionToken: string | null;
}

export interface FixtureOptions {
  email?: string;
  password?: string;
  verified?: boolean;
  role?: "user" | "admin";
  credits?: number;
  session?: boolean;
  expiredSession?: boolean;
}

/** Creates a user on the running stack at `baseUrl`; with a session unless `session: false`. */
export async function createFixtureUser(baseUrl: string, opts: FixtureOptions = {}): Promise<FixtureUser> {
  const res = await fetch(`${baseUrl}/api/dev/users`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(opts),
  });
  if (res.status !== 201) throw new Error(`fixture user: ${res.status} ${await res.text()}`);
  return (await res.json()) as FixtureUser;
}
