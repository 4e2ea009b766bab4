import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Brokerages and teams (migrations/0030_teams.sql; docs/decisions/0270-team-credit-pool.md). Re-exported by
// schema.ts, so test/integration/schema.test.ts checks these columns too.

export type TeamRole = "owner" | "team_admin" | "agent";

export const teams = sqliteTable("teams", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  ownerId: text("owner_id").notNull(),
  seats: integer("seats").notNull().default(1),
  /** The pool: a cache of SUM(team_ledger.amount), written only by the team's Durable Object. */
  credits: integer("credits").notNull().default(0),
  periodStart: integer("period_start").notNull(),
  /** A failed renewal froze the pool: no new team job until a payment succeeds. */
  frozenAt: integer("frozen_at"),
  defaultMlsProfile: text("default_mls_profile"),
  retentionDays: integer("retention_days").notNull().default(1095),
  stripeCustomerId: text("stripe_customer_id"),
  stripeSubscriptionId: text("stripe_subscription_id"),
  /** Stripe's time (ms) of the fact that last set `seats` (migrations/0031_team_seats.sql). */
  seatsAt: integer("seats_at").notNull().default(0),
  /** Stripe's time (ms) of the fact that last froze or thawed the pool. */
  frozenChangedAt: integer("frozen_changed_at").notNull().default(0),
  /** The declined invoice that froze the pool: paying it thaws the pool. */
  failedInvoice: text("failed_invoice"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export const teamMembers = sqliteTable("team_members", {
  teamId: text("team_id").notNull(),
  userId: text("user_id").notNull(),
  role: text("role", { enum: ["owner", "team_admin", "agent"] }).notNull(),
  /** Most pool credits per billing period; null: no limit but the pool. */
  creditLimit: integer("credit_limit"),
  joinedAt: integer("joined_at").notNull(),
  /** Set when removed: the row stays so the ledger and the broker's record still name them. */
  removedAt: integer("removed_at"),
});

export const teamInvitations = sqliteTable("team_invitations", {
  id: text("id").primaryKey(),
  teamId: text("team_id").notNull(),
  email: text("email").notNull(),
  role: text("role", { enum: ["team_admin", "agent"] }).notNull(),
  tokenHash: text("token_hash").notNull(),
  invitedBy: text("invited_by").notNull(),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
  acceptedAt: integer("accepted_at"),
  acceptedBy: text("accepted_by"),
  revokedAt: integer("revoked_at"),
});

export type TeamReservationStatus = "held" | "committed" | "released";

// Who spends a team's pool, as its rows record it (member_id): a member's user id, or a team API key's name.

/** The name a team API key's jobs carry in the pool (member_id): the key, not whoever made it (ADR 0295). */
export function keyPayer(keyId: string): string {
  return `key:${keyId}`;
}

/** The key id of a name made by keyPayer, or null for a member's user id. */
export function payerKey(memberId: string): string | null {
  return memberId.startsWith("key:") ? memberId.slice(4) : null;
}

export const teamReservations = sqliteTable("team_reservations", {
  jobId: text("job_id").primaryKey(),
  teamId: text("team_id").notNull(),
  memberId: text("member_id").notNull(),
  amount: integer("amount").notNull(),
  status: text("status", { enum: ["held", "committed", "released"] }).notNull(),
  periodStart: integer("period_start").notNull(),
  createdAt: integer("created_at").notNull(),
  settledAt: integer("settled_at"),
});

/** `refund`: a committed job's credit given back after the fact ("This result changed the room", migration 0034). */
export type TeamLedgerKind = "grant" | "reserve" | "commit" | "release" | "adjust" | "refund";

export const teamLedger = sqliteTable("team_ledger", {
  id: text("id").primaryKey(),
  teamId: text("team_id").notNull(),
  memberId: text("member_id"),
  kind: text("kind", { enum: ["grant", "reserve", "commit", "release", "adjust", "refund"] }).notNull(),
  amount: integer("amount").notNull(),
  jobId: text("job_id"),
  reason: text("reason").notNull(),
  idempotencyKey: text("idempotency_key").notNull(),
  actorId: text("actor_id"),
  createdAt: integer("created_at").notNull(),
});

export type Team = typeof teams.$inferSelect;
export type TeamMember = typeof teamMembers.$inferSelect;
export type TeamInvitation = typeof teamInvitations.$inferSelect;
export type TeamReservation = typeof teamReservations.$inferSelect;

/** Each invoice fact applied to a team, once (migrations/0031_team_seats.sql). */
export const teamSeatFacts = sqliteTable("team_seat_facts", {
  key: text("key").primaryKey(),
  teamId: text("team_id").notNull(),
  kind: text("kind", { enum: ["period_paid", "seats_changed", "payment_failed"] }).notNull(),
  eventId: text("event_id").notNull(),
  appliedAt: integer("applied_at").notNull(),
});

/** A refunded or disputed seat payment and what it took from the pool (migrations/0039). */
export const teamPaymentReversals = sqliteTable("team_payment_reversals", {
  id: text("id").primaryKey(),
  teamId: text("team_id").notNull(),
  paymentIntentId: text("payment_intent_id").notNull(),
  cause: text("cause", { enum: ["refund", "dispute"] }).notNull(),
  granted: integer("granted").notNull(),
  due: integer("due").notNull(),
  taken: integer("taken").notNull(),
  /** The part of `due` not taken that members' jobs held at the reversal: kept from credits that come back. */
  owed: integer("owed").notNull().default(0),
  /** What has been kept against `owed` so far. */
  heldBack: integer("held_back").notNull().default(0),
  restoredAt: integer("restored_at"),
  createdAt: integer("created_at").notNull(),
});

/** A billing notice to one member, written with the freeze or thaw that caused it and sent afterwards. */
export const teamNotices = sqliteTable("team_notices", {
  id: text("id").primaryKey(),
  teamId: text("team_id").notNull(),
  noticeKey: text("notice_key").notNull(),
  userId: text("user_id").notNull(),
  email: text("email").notNull(),
  kind: text("kind", { enum: ["payment_failed", "payment_recovered"] }).notNull(),
  subject: text("subject").notNull(),
  bodyText: text("body_text").notNull(),
  bodyHtml: text("body_html").notNull(),
  createdAt: integer("created_at").notNull(),
  attempts: integer("attempts").notNull().default(0),
  sentAt: integer("sent_at"),
});

/** The broker's record: one row per photo that left a team listing (migrations/0035_broker_record.sql). */
export const teamExports = sqliteTable("team_exports", {
  id: text("id").primaryKey(),
  teamId: text("team_id").notNull(),
  folderId: text("folder_id").notNull(),
  folderName: text("folder_name").notNull(),
  photoId: text("photo_id").notNull(),
  photoName: text("photo_name").notNull(),
  versionId: text("version_id"),
  versionKind: text("version_kind"),
  via: text("via", {
    enum: ["mls_download", "listing_pack", "api_download", "page_published", "page_withdrawn"],
  }).notNull(),
  memberId: text("member_id").notNull(),
  memberName: text("member_name").notNull(),
  keyId: text("key_id"),
  mlsProfile: text("mls_profile").notNull(),
  labelText: text("label_text"),
  caption: text("caption"),
  contentSha256: text("content_sha256"),
  recordKey: text("record_key"),
  originalKey: text("original_key"),
  packId: text("pack_id"),
  at: integer("at").notNull(),
});

export type TeamExport = typeof teamExports.$inferSelect;
