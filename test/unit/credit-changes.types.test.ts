import type { Database } from "@db/client";
import * as credits from "@workers/objects/user/credits/changes";
import * as grants from "@workers/objects/user/credits/grants";
import * as reservations from "@workers/objects/user/credits/reservations";
import type { RunnerHost } from "@workers/objects/user/jobs/runner";
import { describe, expect, it } from "vitest";

// What a change did to the credit desk's view is in its type (docs/decisions/0154-the-user-objects-parts.md): the
// object's change queue takes a change only with its effect. The lines marked @ts-expect-error are credit changes
// that skip the view's update; `npm run typecheck` fails when any of them compiles (the directive is then unused).

/** Never called: the checks are tsc's. */
function plantedChanges(host: RunnerHost, db: Database) {
  const input = { amount: 1, source: "admin" as const, reason: "r", idempotencyKey: "k" };
  const refundBare = (now: number) => reservations.refund(db, "u", "job", "failed", now);
  const grantBare = (now: number) => grants.grant(db, "u", input, now);
  const claimsNothing = async (now: number) => ({ answer: await refundBare(now) });
  // @ts-expect-error a refund's bare ledger answer says nothing of the view it moved
  void host.change("u", refundBare);
  // @ts-expect-error a grant's bare ledger answer, its view left behind
  void host.change("u", grantBare);
  // @ts-expect-error a change that writes credits and claims nothing at all
  void host.change("u", claimsNothing);
  // The changes as the credit desk makes them compile.
  void host.change("u", (now) => credits.refund(db, "u", "job", "failed", now));
  void host.change("u", async (now) => credits.moved(await refundBare(now)));
}

describe("credit changes carry their effect on the view", () => {
  it("combine in order: the last change that touched the view decides", () => {
    expect(typeof plantedChanges).toBe("function");
    const read: credits.ViewEffect = { view: "read", as: { balance: 3, grants: [] } };
    expect(credits.after({ view: "untouched" }, read, { view: "untouched" })).toEqual(read);
    expect(credits.after(read, { view: "moved" })).toEqual({ view: "moved" });
    expect(credits.after({ view: "moved" }, read)).toEqual(read);
    expect(credits.after()).toEqual({ view: "untouched" });
  });
});
