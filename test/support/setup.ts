import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeEach, expect, vi } from "vitest";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Any console.error during a test fails it: errors must be expected and asserted.
let errors: unknown[][] = [];
beforeEach(() => {
  errors = [];
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    errors.push(args);
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  if (errors.length > 0) {
    const shown = errors.map((e) => e.map(String).join(" ")).join("\n");
    errors = [];
    throw new Error(`console.error was called during the test:\n${shown}`);
  }
});

/** Lets a test that provokes an error on purpose take it off the list. */
export function takeConsoleErrors(): unknown[][] {
  const taken = errors;
  errors = [];
  return taken;
}

// After every test, for every user: the cached balance equals the ledger's sum
// and what is left in their grants (docs/decisions/0020-credit-ledger.md).
afterEach(async () => {
  const { results } = await env.DB.prepare(
    `SELECT u.id, u.credits,
            (SELECT coalesce(sum(amount), 0) FROM credit_ledger l WHERE l.user_id = u.id) AS ledger,
            (SELECT coalesce(sum(remaining), 0) FROM credit_grants g WHERE g.user_id = u.id) AS remaining
       FROM users u
      WHERE u.credits != ledger OR u.credits != remaining`,
  ).all();
  expect(results, "users whose cached balance differs from their ledger").toEqual([]);
});

// The same for every team's pool (docs/decisions/0270-team-credit-pool.md): the cache equals its ledger's sum, and
// each reservation's ledger rows match its status (reserved once; released adds it back; committed adds nothing).
afterEach(async () => {
  const { results: pools } = await env.DB.prepare(
    `SELECT t.id, t.credits, (SELECT coalesce(sum(amount), 0) FROM team_ledger l WHERE l.team_id = t.id) AS ledger
       FROM teams t WHERE t.credits != ledger`,
  ).all();
  expect(pools, "teams whose pool differs from their ledger").toEqual([]);
  const { results: held } = await env.DB.prepare(
    `SELECT r.job_id, r.status, r.amount,
            (SELECT coalesce(sum(amount), 0) FROM team_ledger l WHERE l.job_id = r.job_id AND l.team_id = r.team_id) AS net
       FROM team_reservations r
      WHERE net != CASE r.status WHEN 'released' THEN 0 ELSE -r.amount END`,
  ).all();
  expect(held, "team reservations whose ledger rows disagree with their status").toEqual([]);
});

// Before a file ends, every user's object finishes the jobs it runs. A job's last steps (its place given back, its
// timings line) run after its result is visible, so a test can end first; a line a Durable Object logs after the
// file's last test is never delivered by @cloudflare/vitest-plugin 1.4 (a log from another I/O context waits for
// the runner's next message, and there is none), and vitest waits for it forever: the suite stalled between files.
afterAll(async () => {
  const { results } = await env.DB.prepare("SELECT DISTINCT user_id AS id FROM jobs").all<{ id: string }>();
  await Promise.all(
    results.map(({ id }) => env.USER_OBJECT.get(env.USER_OBJECT.idFromName(id)).settledForTesting(5_000)),
  );
});
