import { apiKeys } from "@db/schema";
import {
  needsSealing,
  newCallbackSecret,
  openCallbackSecret,
  type StoredCallbackSecret,
  sealCallbackSecret,
} from "@workers/lib/callback-signing";
import { log } from "@workers/lib/log";
import { keyring } from "@workers/lib/signing-keys";

/** For the settings page, which reaches the server through services only. */
export { oldSecretSignsUntil } from "@workers/lib/callback-signing";

import { and, eq, gt, isNull, ne, or, type SQL } from "drizzle-orm";
import { fail, ok, type Result } from "~/shared/result";
import type { Deps } from "./request-deps";

// Each API key's callback signing secret (docs/decisions/0182-signing-keys-rotate.md): its owner rotates it alone,
// and the daily maintenance keeps every key's secret sealed under the current signing key, so a signing key can be
// removed from SIGNING_KEYS (or SIGNING_SECRET unset) without changing any integrator's secret.

/** Keys resealed per maintenance run at most (each is one row update, sent in batches). */
const RESEAL_LIMIT = 2_000;
const BATCH = 100;

/** How long the secret a rotation replaced still signs callbacks beside the new one (ADR 0350). */
export const CALLBACK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * A new callback secret for one of the owner's active keys: it alone changes, and this answer shows it once. The
 * secret it replaces, when still readable, signs beside it for CALLBACK_SECRET_OVERLAP_MS, so the integrator's
 * receiver can take the new one without losing a callback; a second rotation within that day ends the first overlap.
 */
export async function rotateCallbackSecret(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  keyId: string,
  now = Date.now(),
): Promise<Result<{ name: string; callbackSecret: string; previousUntil: number | null }>> {
  const key = await deps.db
    .select({
      name: apiKeys.name,
      callbackSecret: apiKeys.callbackSecret,
      callbackSecretKey: apiKeys.callbackSecretKey,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .get();
  if (!key) return fail("not_found", "This key does not exist or is revoked.");
  const ring = keyring(deps.env);
  const callbackSecret = newCallbackSecret();
  const sealed = await sealCallbackSecret(ring, keyId, callbackSecret);
  // The replaced secret keeps signing only if it can still be read (its signing key is still listed).
  const readable = (await openCallbackSecret(ring, keyId, key)) !== null;
  const previousUntil = readable ? now + CALLBACK_SECRET_OVERLAP_MS : null;
  const res = await deps.db
    .update(apiKeys)
    .set({
      ...sealed,
      previousCallbackSecret: readable ? key.callbackSecret : null,
      previousCallbackSecretKey: readable ? key.callbackSecretKey : null,
      previousCallbackUntil: previousUntil,
    })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt), unchanged(key)))
    .run();
  // Rotated at the same moment by another request: that one's secret stands, and this one is refused.
  if (res.meta.changes !== 1)
    return fail("conflict", "This key's callback secret was just replaced, or the key revoked; reload the page.");
  return ok({ name: key.name, callbackSecret, previousUntil });
}

/**
 * Ends the overlap of the owner's last rotation now (ADR 0353): the replaced secret stops signing at once, for an
 * integrator whose old secret leaked. Refused, changing nothing, when the key is not the owner's, is revoked, or has no
 * replaced secret still signing.
 */
export async function endPreviousCallbackSecret(
  deps: Pick<Deps, "db">,
  userId: string,
  keyId: string,
  now = Date.now(),
): Promise<Result<{ name: string }>> {
  const ended = await deps.db
    .update(apiKeys)
    .set({ previousCallbackSecret: null, previousCallbackSecretKey: null, previousCallbackUntil: null })
    .where(
      and(
        eq(apiKeys.id, keyId),
        eq(apiKeys.userId, userId),
        isNull(apiKeys.revokedAt),
        gt(apiKeys.previousCallbackUntil, now),
      ),
    )
    .returning({ name: apiKeys.name });
  if (ended[0]) return ok({ name: ended[0].name });
  const key = await deps.db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .get();
  if (!key) return fail("not_found", "This key does not exist or is revoked.");
  return fail("conflict", "This key's old callback secret no longer signs; nothing changed.");
}

/** The stored secret as it was read: the update below applies only if nobody changed it since (a rotation). */
function unchanged(stored: StoredCallbackSecret): SQL {
  return and(
    stored.callbackSecret === null ? isNull(apiKeys.callbackSecret) : eq(apiKeys.callbackSecret, stored.callbackSecret),
    stored.callbackSecretKey === null
      ? isNull(apiKeys.callbackSecretKey)
      : eq(apiKeys.callbackSecretKey, stored.callbackSecretKey),
  )!;
}

/**
 * Daily: seals under the current signing key every active key's callback secret that is derived (a key made before
 * secrets were stored) or sealed under an older key. Answers how many were resealed, how many cannot be read (sealed
 * under a key no longer listed: their owners must rotate), and how many still wait (over the run's limit).
 */
export async function resealCallbackSecrets(
  deps: Pick<Deps, "db" | "env">,
): Promise<{ resealed: number; unreadable: number; waiting: number }> {
  const ring = keyring(deps.env);
  const rows = await deps.db
    .select({ id: apiKeys.id, callbackSecret: apiKeys.callbackSecret, callbackSecretKey: apiKeys.callbackSecretKey })
    .from(apiKeys)
    .where(
      and(
        isNull(apiKeys.revokedAt),
        or(
          isNull(apiKeys.callbackSecret),
          isNull(apiKeys.callbackSecretKey),
          ne(apiKeys.callbackSecretKey, ring.current.id),
        ),
      ),
    )
    .limit(RESEAL_LIMIT + 1)
    .all();
  const waiting = Math.max(0, rows.length - RESEAL_LIMIT);
  let unreadable = 0;
  const updates = [];
  for (const row of rows.slice(0, RESEAL_LIMIT)) {
    if (!needsSealing(ring, row)) continue;
    const secret = await openCallbackSecret(ring, row.id, row);
    if (secret === null) {
      unreadable += 1;
      continue;
    }
    const sealed = await sealCallbackSecret(ring, row.id, secret);
    updates.push(
      deps.db
        .update(apiKeys)
        .set(sealed)
        .where(and(eq(apiKeys.id, row.id), unchanged(row))),
    );
  }
  for (let i = 0; i < updates.length; i += BATCH) {
    const chunk = updates.slice(i, i + BATCH);
    await deps.db.batch(chunk as [(typeof chunk)[number], ...typeof chunk]);
  }
  if (waiting > 0) log.warn(`callback secrets: ${waiting} more API key(s) wait for the next run`, { waiting });
  if (unreadable > 0) {
    log.error(
      `callback secrets: ${unreadable} API key(s) have a callback secret sealed under a signing key no longer configured; their callbacks fail until their owners rotate the secret (docs/decisions/0182-signing-keys-rotate.md)`,
      { unreadable, where: "cron" },
    );
  }
  return { resealed: updates.length, unreadable, waiting };
}
