import { env } from "cloudflare:workers";
import { db, makeUser } from "@test/support/factories";
import { createApiKey, KEYS_MADE_MESSAGE, listApiKeys, revokeApiKey } from "@workers/services/api-keys";
import { describe, expect, it } from "vitest";

// A person's API keys as the settings page and the admin user page list them. A stolen session could make and
// revoke a hundred keys to push an earlier live one off the list, where nobody could see or revoke it.

const deps = { db, env, clock: () => Date.now() };
const make = (userId: string, name: string, d = deps) => createApiKey(d, userId, { name, scopes: ["read"] });
const HOUR = 60 * 60 * 1000;

describe("API keys, listed and capped", () => {
  it("a live key stays on the list however many keys were made and revoked after it", async () => {
    const user = await makeUser();
    // Over four days: at most 50 keys a day may be made (revoked ones count).
    let at = Date.now() - 120 * HOUR;
    const later = { ...deps, clock: () => at };
    const hidden = await make(user.id, "made first", later);
    if (!hidden.ok) throw new Error(hidden.error);
    for (let i = 0; i < 101; i++) {
      at += HOUR;
      const k = await make(user.id, `churn ${i}`, later);
      if (!k.ok) throw new Error(k.error);
      expect((await revokeApiKey(later, user.id, k.key.id)).ok).toBe(true);
    }
    const listed = await listApiKeys(db, user.id);
    expect(listed).toHaveLength(100);
    expect(listed[0]).toMatchObject({ id: hidden.key.id, revokedAt: null });
  });

  it("at most 50 keys are made in a day, revoked ones included", async () => {
    const user = await makeUser();
    for (let i = 0; i < 50; i++) {
      const k = await make(user.id, `k${i}`);
      if (!k.ok) throw new Error(k.error);
      await revokeApiKey(deps, user.id, k.key.id);
    }
    expect(await make(user.id, "one more")).toEqual({ ok: false, code: "rate_limited", error: KEYS_MADE_MESSAGE });
    // A day later, one more may be made.
    expect((await make(user.id, "tomorrow", { ...deps, clock: () => Date.now() + 25 * HOUR })).ok).toBe(true);
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
