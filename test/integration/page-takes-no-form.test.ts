import { env } from "cloudflare:workers";
import { db } from "@test/support/factories";
import { adminPageTakesNoForm, devPageTakesNoForm, userContext } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import type { CurrentUser } from "@workers/services/current-user";
import { RouterContextProvider } from "react-router";
import { describe, expect, it } from "vitest";

// A page that takes no form answers a POST as its loader answers a GET first: React Router's
// own 405 for a page without an action told a stranger that /admin is there, and production that /dev/mailbox is.

function contextFor(user: CurrentUser | null, devTools: boolean) {
  const context = new RouterContextProvider();
  context.set(userContext, user);
  const e = { ...env, DEV_TOOLS: devTools ? "1" : undefined, APP_ENV: devTools ? "development" : "production" };
  context.set(requestContext, { env: e, db, deps: { db, env: e, clock: () => Date.now() } } as never);
  return context;
}

function statusOf(f: () => never): number {
  try {
    f();
  } catch (thrown) {
    if (thrown instanceof Response) return thrown.status;
    throw thrown;
  }
  throw new Error("answered without throwing");
}

describe("pages that take no form", () => {
  const admin = { id: "a", role: "admin", verified: true } as CurrentUser;
  const unverifiedAdmin = { id: "b", role: "admin", verified: false } as CurrentUser;
  const user = { id: "c", role: "user", verified: true } as CurrentUser;

  it("an admin page: 404 to a visitor, a user and an unverified admin; 405 to an admin", () => {
    for (const who of [null, user, unverifiedAdmin])
      expect(statusOf(() => adminPageTakesNoForm({ context: contextFor(who, true) }))).toBe(404);
    expect(statusOf(() => adminPageTakesNoForm({ context: contextFor(admin, true) }))).toBe(405);
  });

  it("a development page: 404 wherever dev tools are off, even to an admin; 405 where they are on", () => {
    for (const who of [null, admin])
      expect(statusOf(() => devPageTakesNoForm({ context: contextFor(who, false) }))).toBe(404);
    expect(statusOf(() => devPageTakesNoForm({ context: contextFor(user, true) }))).toBe(405);
  });
});
