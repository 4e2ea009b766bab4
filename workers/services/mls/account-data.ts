import type { Database } from "@db/client";
import {
  apiCallbacks,
  apiIdempotency,
  apiKeys,
  auditLog,
  contactMessages,
  dataExports,
  emailTokens,
  labelSettings,
  originalLinks,
  sessions,
  subscriptions,
  teamMembers,
  users,
} from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { verifyLink } from "@workers/lib/signed-links";
import { LIVE_STATUSES } from "@workers/objects/billing-client";
import { userObject } from "@workers/objects/client";
import { consumeReauth, REAUTH_MESSAGES } from "@workers/services/accounts/google-reauth";
import { overLimit } from "@workers/services/limits";
import { verifyPassword } from "@workers/services/password";
import type { Deps } from "@workers/services/request-deps";
import { ownedTeams, ownerMustHandOver } from "@workers/services/teams/teams";
import { and, eq, gt, isNotNull, isNull, ne, or, sql } from "drizzle-orm";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";

// Account deletion and "export my data" (docs/decisions/0112-account-deletion-and-export.md).

export const DELETE_RULE = { name: "account-delete", limit: 5, windowMs: 15 * 60 * 1000 };
export const EXPORT_RULE = { name: "account-export", limit: 3, windowMs: 24 * 60 * 60 * 1000 };

/** The address a deleted account keeps: unique, not deliverable, free for a new sign-up of the old one. */
export function deletedEmail(userId: string): string {
  return `deleted-${userId}@deleted.invalid`;
}

type DeletionDeps = Pick<Deps, "db" | "env" | "stripe" | "clock" | "rateLimit">;

/**
 * What proves the owner asked: the password typed again, or a Google
 * confirmation recorded on this session in the last 5 minutes and not used
 * (workers/services/accounts/google-reauth.ts).
 */
export type DeletionProof = { password: string } | { googleSessionId: string };

/**
 * Deletes the account after its owner proved it again (password or Google): cancels any live
 * Stripe subscription (first, so a failure there changes nothing), erases
 * personal data and ends every session in one batch, then hands the purge of
 * photos and R2 objects to the user's Durable Object (batched by its alarm).
 */
export const LAST_ADMIN_DELETION =
  "You are the only admin: make another verified user an admin before deleting your account.";

/** Whether a verified admin other than `userId` remains (the admin pages need one, app/shared/access.ts). */
export async function anotherAdmin(db: Database, userId: string): Promise<boolean> {
  const row = await db
    .select({ id: users.id })
    .from(users)
    .where(
      and(eq(users.role, "admin"), isNotNull(users.emailVerifiedAt), isNull(users.deletedAt), ne(users.id, userId)),
    )
    .get();
  return row !== undefined;
}

export async function deleteAccount(deps: DeletionDeps, userId: string, proof: DeletionProof): Promise<Result> {
  const limited = await overLimit(deps, DELETE_RULE, [userId]);
  if (limited) return limited;
  const { db } = deps;
  const user = await db.select().from(users).where(eq(users.id, userId)).get();
  if (!user || user.deletedAt !== null) return fail("not_found", "This account does not exist.");
  // A team with other members keeps an owner: refused before the proof is used (ADR 0311).
  const owned = await ownedTeams(db, userId);
  const needed = owned.find((t) => t.others);
  if (needed) return fail("conflict", ownerMustHandOver(needed));
  // The admin pages need a verified admin: the last one hands the role on first (as setRole refuses to remove it).
  if (user.role === "admin" && user.emailVerifiedAt !== null && !(await anotherAdmin(db, userId)))
    return fail("conflict", LAST_ADMIN_DELETION);
  let restoreProof: (() => Promise<void>) | null = null;
  if ("googleSessionId" in proof) {
    if (!user.googleSub) return fail("forbidden", REAUTH_MESSAGES.noGoogle);
    const used = await consumeReauth(deps, { userId, sessionId: proof.googleSessionId });
    if (!used.ok) return fail("forbidden", REAUTH_MESSAGES.needProof);
    restoreProof = used.restore;
  } else {
    if (!user.passwordHash)
      return fail("forbidden", "This account signs in with Google: confirm the deletion with Google instead.");
    if (!proof.password || !(await verifyPassword(proof.password.slice(0, 200), user.passwordHash)))
      return fail("invalid", "The password is not correct.", {
        fieldErrors: { password: "The password is not correct." },
      });
  }

  const subs = await db.select().from(subscriptions).where(eq(subscriptions.userId, userId)).all();
  // Their own plans, and the team plans of teams they are alone in (ADR 0311): nobody else is left to pay or use them.
  const live = [
    ...subs.filter((s) => LIVE_STATUSES.has(s.status)).map((s) => s.id),
    ...owned.flatMap((t) => (t.subscription ? [t.subscription] : [])),
  ];
  for (const id of live) {
    try {
      await deps.stripe.subscriptions.cancel(id);
    } catch (err) {
      log.warn("stripe cancel failed", { err });
      await restoreProof?.();
      return fail("unavailable", "We could not cancel your subscription with Stripe. Nothing was deleted; try again.");
    }
  }
  const now = deps.clock();
  await db.batch([
    db
      .update(users)
      .set({
        email: deletedEmail(userId),
        name: "Deleted user",
        passwordHash: null,
        googleSub: null,
        emailVerifiedAt: null,
        role: "user",
        deletedAt: now,
        updatedAt: now,
        lastActiveAt: null,
      })
      .where(eq(users.id, userId)),
    db
      .update(subscriptions)
      .set({ status: "canceled", endedAt: now, updatedAt: now })
      .where(
        and(
          eq(subscriptions.userId, userId),
          or(
            eq(subscriptions.status, "active"),
            eq(subscriptions.status, "trialing"),
            eq(subscriptions.status, "past_due"),
          ),
        ),
      ),
    db.delete(sessions).where(eq(sessions.userId, userId)),
    db.delete(emailTokens).where(eq(emailTokens.userId, userId)),
    db
      .update(apiKeys)
      .set({
        revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now})`,
        revokedReason: sql`coalesce(${apiKeys.revokedReason}, 'account_deleted')`,
        name: "deleted",
      })
      .where(eq(apiKeys.userId, userId)),
    // Export links die with the account, at once: the purge deletes the archives later, but a mailed link must
    // not download the account's data in between (docs/decisions/0153-credentials-end-with-the-accounts-trust.md).
    db.delete(dataExports).where(eq(dataExports.userId, userId)),
    db.delete(apiIdempotency).where(eq(apiIdempotency.userId, userId)),
    db.delete(apiCallbacks).where(eq(apiCallbacks.userId, userId)),
    db.delete(labelSettings).where(eq(labelSettings.userId, userId)),
    db
      .update(originalLinks)
      .set({ revokedAt: now, revokedReason: "account_deleted" })
      // A team listing's original pages are the team's: they stay up (ADR 0280).
      .where(
        and(
          eq(originalLinks.userId, userId),
          isNull(originalLinks.revokedAt),
          sql`${originalLinks.photoId} NOT IN (SELECT p.id FROM photos p JOIN folders f ON f.id = p.folder_id WHERE f.team_id IS NOT NULL)`,
        ),
      ),
    // Their team memberships end with the account, as a removal would (ADR 0280): the seat is free, and nothing of
    // the team's (its listings' photos, versions, original pages, the broker's record) is touched.
    db
      .update(teamMembers)
      .set({ removedAt: now })
      .where(and(eq(teamMembers.userId, userId), isNull(teamMembers.removedAt))),
    db.delete(contactMessages).where(or(eq(contactMessages.userId, userId), eq(contactMessages.email, user.email))),
    db.update(auditLog).set({ actorEmail: "deleted user" }).where(eq(auditLog.actorId, userId)),
  ]);
  await userObject(deps.env, userId).startBackground(userId, { kind: "purge" });
  return ok({});
}

/** Which proofs the settings page offers for deleting this account. */
export async function deletionMethods(db: Deps["db"], userId: string): Promise<{ password: boolean; google: boolean }> {
  const row = await db
    .select({ passwordHash: users.passwordHash, googleSub: users.googleSub })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  return { password: Boolean(row?.passwordHash), google: Boolean(row?.googleSub) };
}

/**
 * Ends every export link of the user, in the batch that ends their sessions and keys (a password reset, an admin's
 * "sign out everywhere"; docs/decisions/0206-export-links-end-with-the-sessions.md): a ready archive's link answers
 * 410 from now on, as one that expired; an export still being prepared is marked failed, so it is never mailed. The
 * archive itself is deleted at its planned expiry by the user's object, as any other.
 */
export function endExportLinksStatements(db: Deps["db"], userId: string, now: number) {
  return [
    db
      .update(dataExports)
      .set({ expiresAt: now })
      .where(and(eq(dataExports.userId, userId), eq(dataExports.status, "ready"), gt(dataExports.expiresAt, now))),
    db
      .update(dataExports)
      .set({ status: "failed" })
      .where(and(eq(dataExports.userId, userId), eq(dataExports.status, "queued"))),
  ] as const;
}

/** Queues an export; its link is mailed when it is ready. */
export async function requestExport(
  deps: Pick<Deps, "db" | "env" | "clock" | "rateLimit">,
  userId: string,
): Promise<Result<{ id: string }>> {
  const { db } = deps;
  const now = deps.clock();
  const pending = await db
    .select({ id: dataExports.id })
    .from(dataExports)
    .where(
      and(
        eq(dataExports.userId, userId),
        eq(dataExports.status, "queued"),
        gt(dataExports.createdAt, now - 60 * 60 * 1000),
      ),
    )
    .get();
  if (pending) return fail("conflict", "An export is already being prepared: we will e-mail you its link.");
  const limited = await overLimit(deps, EXPORT_RULE, [userId]);
  if (limited) return limited;
  const id = randomToken(16);
  await db.insert(dataExports).values({ id, userId, status: "queued", createdAt: now });
  await userObject(deps.env, userId).startBackground(userId, { kind: "export", exportId: id });
  return ok({ id });
}

/** The export's bytes behind a mailed link (no session needed: the signature is the key). */
export async function openExport(
  deps: Pick<Deps, "db" | "env" | "bucket" | "clock">,
  id: string,
  exp: string | undefined,
  sig: string | undefined,
): Promise<Result<{ body: ReadableStream; size: number }>> {
  if (!/^[a-z2-7]{26}$/.test(id)) return NOT_FOUND;
  if (!(await verifyLink(deps.env, "export", id, exp, sig, deps.clock())))
    return fail("gone", "This link has expired or is not valid. Ask for a new export from your settings.");
  const found = await deps.db
    .select({ row: dataExports, deletedAt: users.deletedAt })
    .from(dataExports)
    .innerJoin(users, eq(users.id, dataExports.userId))
    .where(eq(dataExports.id, id))
    .get();
  // The account's deletion removes its export rows; the owner's deletedAt is checked too, so no export of a deleted
  // account is ever served, whatever the row says.
  if (found && found.deletedAt !== null) return fail("gone", "This account was deleted, and its export with it.");
  const row = found?.row;
  // Expired at its expiry moment: a link ended by a reset (expiresAt set to that moment) is refused from then on.
  if (row?.status !== "ready" || !row.objectKey || (row.expiresAt ?? 0) <= deps.clock())
    return fail("gone", "This export has expired. Ask for a new one from your settings.");
  const obj = await deps.bucket.get(row.objectKey);
  if (!obj) return fail("gone", "This export has expired. Ask for a new one from your settings.");
  return ok({ body: obj.body, size: obj.size });
}
