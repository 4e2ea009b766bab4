import { insertUnderCaps } from "@db/capped";
import type { Database } from "@db/client";
import { type ApiKey, type ApiKeyRevokedReason, type ApiScope, apiCallbacks, apiKeys, users } from "@db/schema";
import { newCallbackSecret, sealCallbackSecret } from "@workers/lib/callback-signing";
import { randomToken, sha256Hex } from "@workers/lib/crypto";
import { setLogUser } from "@workers/lib/log";
import { keyring } from "@workers/lib/signing-keys";
import type { RateRule } from "@workers/objects/limits-client";
import { and, count, desc, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { fail, ok, type Result } from "~/shared/result";
import { overLimit } from "./limits";
import type { Deps } from "./request-deps";

// API keys for the public API (docs/decisions/0120-public-api.md). A key acts
// as its user, within its scopes. Like a session token, the key is 160 random
// bits shown once; D1 keeps only its SHA-256, so a leaked database holds no
// usable key. Every request reads the row, so a revocation takes effect on
// the next request.

export const API_SCOPES = ["stage", "read"] as const satisfies readonly ApiScope[];
export const KEY_PREFIX = "sw_";
const MAX_KEYS = 20;
/** Keys made in a day, revoked ones included. */
const MAX_KEYS_MADE = 50;
const KEYS_MADE_WINDOW_MS = 24 * 60 * 60 * 1000;
export const KEYS_MADE_MESSAGE = `You made ${MAX_KEYS_MADE} API keys in the last 24 hours, the most there can be. Try again tomorrow.`;
/** Requests one key may make per minute, counted in the RateLimiter Durable Object. */
export const API_KEY_RULE: RateRule = { name: "api-key", limit: 300, windowMs: 60 * 1000 };
/** last_used_at is written at most this often per key. */
const LAST_USED_WRITE_MS = 60 * 1000;

export const createKeyInput = z.object({
  name: z
    .string()
    .trim()
    .min(1, "Please give the key a name.")
    .max(60, "Names are at most 60 characters.")
    .refine((s) => !/\p{Cc}/u.test(s), "Names cannot contain control characters."),
  scopes: z.array(z.enum(API_SCOPES)).min(1, "Please choose at least one scope."),
});

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: ApiScope[];
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  revokedReason: ApiKeyRevokedReason | null;
  /** Until when the secret its last rotation replaced still signs callbacks (ADR 0350), or null. */
  previousCallbackUntil: number | null;
}

function view(k: ApiKey): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt,
    revokedAt: k.revokedAt,
    revokedReason: k.revokedReason,
    previousCallbackUntil: k.previousCallbackUntil,
  };
}

export async function listApiKeys(db: Database, userId: string): Promise<ApiKeyView[]> {
  const rows = await db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.userId, userId))
    // Active keys first (at most MAX_KEYS of them): however many were made and revoked, no live key is left off
    // the list where its owner and an admin revoke it.
    .orderBy(sql`${apiKeys.revokedAt} IS NOT NULL`, desc(apiKeys.createdAt))
    .limit(100)
    .all();
  return rows.map(view);
}

/** Creates a key; its secret and its callback signing secret are in this answer only. */
export async function createApiKey(
  deps: Pick<Deps, "db" | "env" | "clock">,
  userId: string,
  input: z.infer<typeof createKeyInput>,
): Promise<Result<{ key: ApiKeyView; token: string; callbackSecret: string }>> {
  const token = `${KEY_PREFIX}${randomToken(20)}`;
  const id = randomToken(10);
  // The key's own callback signing secret, stored sealed (docs/decisions/0182-signing-keys-rotate.md).
  const callbackSecret = newCallbackSecret();
  const row: ApiKey = {
    id,
    userId,
    tokenHash: sha256Hex(token),
    prefix: token.slice(0, 10),
    name: input.name,
    scopes: [...new Set(input.scopes)],
    createdAt: deps.clock(),
    lastUsedAt: null,
    revokedAt: null,
    revokedReason: null,
    previousCallbackSecret: null,
    previousCallbackSecretKey: null,
    previousCallbackUntil: null,
    ...(await sealCallbackSecret(keyring(deps.env), id, callbackSecret)),
    teamId: null,
    createdBy: null,
    folderId: null,
    creditLimit: null,
  };
  const keys = (where: SQL | undefined) => deps.db.select({ n: count() }).from(apiKeys).where(where);
  const over = await insertUnderCaps(
    deps.db,
    deps.db.insert(apiKeys).values(row),
    [
      { count: keys(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))), max: MAX_KEYS },
      // Revoked keys count too: making and revoking keys would otherwise give a fresh request rate without end.
      {
        count: keys(and(eq(apiKeys.userId, userId), gt(apiKeys.createdAt, row.createdAt - KEYS_MADE_WINDOW_MS))),
        max: MAX_KEYS_MADE,
      },
    ],
    () => deps.db.delete(apiKeys).where(eq(apiKeys.id, id)),
  );
  if (over === 0) return fail("conflict", `You can have at most ${MAX_KEYS} active keys.`);
  if (over === 1) return fail("rate_limited", KEYS_MADE_MESSAGE);
  return ok({ key: view(row), token, callbackSecret });
}

export async function revokeApiKey(deps: Pick<Deps, "db" | "clock">, userId: string, keyId: string): Promise<Result> {
  const res = await deps.db
    .update(apiKeys)
    .set({ revokedAt: deps.clock(), revokedReason: "owner" })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .run();
  return res.meta.changes === 1 ? ok({}) : fail("not_found", "This key does not exist or is already revoked.");
}

/**
 * Revokes every active key of the user, as a statement for the batch that ends the account's other credentials
 * (a password reset, an admin's "sign out everywhere": docs/decisions/0153-credentials-end-with-the-accounts-trust.md).
 */
export function revokeAllKeysStatement(db: Database, userId: string, reason: ApiKeyRevokedReason, now: number) {
  return db
    .update(apiKeys)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
}

/** How many keys of the user still work. */
export async function activeKeyCount(db: Database, userId: string): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .get();
  return row?.n ?? 0;
}

/** Revocations the owner did not make themselves, which the settings page explains. */
export const REVOKED_FOR_YOU: Partial<Record<ApiKeyRevokedReason, string>> = {
  password_reset: "revoked when your password was reset",
  sessions_revoked: "revoked when Stagewise support signed you out everywhere",
  admin: "revoked by Stagewise support",
};

/**
 * The notice the API keys section shows after keys were revoked for the owner (a reset, an admin), until they make
 * a new key: what happened, when, and that new keys can be made.
 */
export function keysRevokedNotice(keys: ApiKeyView[]): string | null {
  const newest = keys.reduce<ApiKeyView | null>(
    (a, k) =>
      k.revokedAt !== null && REVOKED_FOR_YOU[k.revokedReason ?? "owner"] && (!a || k.revokedAt > a.revokedAt!) ? k : a,
    null,
  );
  if (!newest) return null;
  if (keys.some((k) => k.revokedAt === null && k.createdAt > newest.revokedAt!)) return null;
  const why = REVOKED_FOR_YOU[newest.revokedReason ?? "owner"]!;
  const n = keys.filter((k) => k.revokedAt === newest.revokedAt && k.revokedReason === newest.revokedReason).length;
  return `${n === 1 ? "Your API key was" : `${n} of your API keys were`} ${why}, on ${new Date(newest.revokedAt!).toISOString().slice(0, 16).replace("T", " ")} UTC. Integrations using ${n === 1 ? "it" : "them"} get 401 now: create a new key below and put it in their place.`;
}

export interface ApiCaller {
  /** Whose photos and jobs the key reaches: its user, or for a team key the team's runner (ADR 0295). */
  userId: string;
  verified: boolean;
  keyId: string;
  scopes: ApiScope[];
  /** A team key: its team, and the team listing its uploads go to. */
  team?: { teamId: string; folderId: string };
}

/** The key in `Authorization: Bearer sw_…`, checked and counted against its rate limit. */
export async function authenticateApiKey(
  deps: Pick<Deps, "db" | "defer" | "rateLimit" | "clock">,
  authorization: string | null,
): Promise<Result<{ caller: ApiCaller }>> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  const token = m?.[1] ?? "";
  if (!/^sw_[a-z2-7]{32}$/.test(token)) {
    return fail("unauthenticated", "Send your API key as Authorization: Bearer sw_….");
  }
  const row = await deps.db
    .select({ key: apiKeys, verifiedAt: users.emailVerifiedAt })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.tokenHash, sha256Hex(token)))
    .get();
  if (!row || row.key.revokedAt !== null) return fail("unauthenticated", "This API key is not valid or was revoked.");
  const limited = await overLimit(deps, API_KEY_RULE, [row.key.id]);
  if (limited) return limited;
  const now = deps.clock();
  if (row.key.lastUsedAt === null || row.key.lastUsedAt < now - LAST_USED_WRITE_MS) {
    deps.defer(deps.db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.key.id)).run());
  }
  setLogUser(row.key.userId);
  return ok({
    caller: {
      userId: row.key.userId,
      verified: row.verifiedAt !== null,
      keyId: row.key.id,
      scopes: row.key.scopes,
      ...(row.key.teamId && row.key.folderId ? { team: { teamId: row.key.teamId, folderId: row.key.folderId } } : {}),
    },
  });
}

export interface DeliveryView {
  jobId: string;
  url: string;
  status: "waiting" | "pending" | "delivered" | "failed";
  attempts: number;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  nextAt: number | null;
  createdAt: number;
  deliveredAt: number | null;
}

/** The user's newest callbacks and how their delivery went (the log on the API keys page). */
export async function listDeliveries(db: Database, userId: string, limit = 30): Promise<DeliveryView[]> {
  return db
    .select({
      jobId: apiCallbacks.jobId,
      url: apiCallbacks.url,
      status: apiCallbacks.status,
      attempts: apiCallbacks.attempts,
      lastAttemptAt: apiCallbacks.lastAttemptAt,
      lastStatus: apiCallbacks.lastStatus,
      lastError: apiCallbacks.lastError,
      nextAt: apiCallbacks.nextAt,
      createdAt: apiCallbacks.createdAt,
      deliveredAt: apiCallbacks.deliveredAt,
    })
    .from(apiCallbacks)
    .where(eq(apiCallbacks.userId, userId))
    .orderBy(desc(apiCallbacks.createdAt))
    .limit(limit)
    .all();
}
