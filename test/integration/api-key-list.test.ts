import { env } from "cloudflare:workers";
import { db, makeUser } from "@test/support/factories";
import { createApiKey, listApiKeys, revokeApiKey } from "@workers/services/api-keys";
import { describe, expect, it } from "vitest";

// A person's API keys as the settings page and the admin user page list them. A stolen session could make and
// revoke a hundred keys to push an earlier live one off the list, where nobody could see or revoke it.

const deps = { db, env, clock: () => Date.now() };
const make = (userId: string, name: string) => createApiKey(deps, userId, { name, scopes: ["read"] });

describe("API keys, listed and capped", () => {
  it("a live key stays on the list however many keys were made and revoked after it", async () => {
    const user = await makeUser();
    const hidden = await make(user.id, "made first");
    if (!hidden.ok) throw new Error(hidden.error);
    for (let i = 0; i < 101; i++) {
      const k = await make(user.id, `churn ${i}`);
      if (!k.ok) throw new Error(k.error);
      expect((await revokeApiKey(deps, user.id, k.key.id)).ok).toBe(true);
    }
    const listed = await listApiKeys(db, user.id);
    expect(listed).toHaveLength(100);
    expect(listed[0]).toMatchObject({ id: hidden.key.id, revokedAt: null });
  });

  it("keys made at once never pass the cap of 20 active keys", async () => {
    const user = await makeUser();
    for (let i = 0; i < 18; i++) expect((await make(user.id, `k${i}`)).ok).toBe(true);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => make(user.id, `at once ${i}`)));
    const active = (await listApiKeys(db, user.id)).filter((k) => k.revokedAt === null);
    expect(active.length).toBeLessThanOrEqual(20);
    expect(answers.filter((a) => a.ok)).toHaveLength(active.length - 18);
    for (const a of answers) if (!a.ok) expect(a.error).toBe("You can have at most 20 active keys.");
  });
});
