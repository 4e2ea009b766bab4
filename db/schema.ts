import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Mirrors migrations/*.sql (the SQL is the source of truth; test/integration/schema.test.ts
// checks that every column declared here exists in the migrated database).

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    name: text("name").notNull(),
    passwordHash: text("password_hash"),
    emailVerifiedAt: integer("email_verified_at"),
    role: text("role", { enum: ["user", "admin"] })
      .notNull()
      .default("user"),
    googleSub: text("google_sub"),
    plan: text("plan"),
    planCredits: integer("plan_credits").notNull().default(0),
    planPriceCents: integer("plan_price_cents").notNull().default(0),
    planInterval: text("plan_interval", { enum: ["month", "year"] }),
    planFeatures: text("plan_features", { mode: "json" }).$type<string[]>().notNull().default([]),
    nextPaymentAt: integer("next_payment_at"),
    stripeCustomerId: text("stripe_customer_id"),
    stripeSubscriptionId: text("stripe_subscription_id"),
    credits: integer("credits").notNull().default(0),
    signupCreditsGranted: integer("signup_credits_granted").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    lastActiveAt: integer("last_active_at"),
    /** Set when the account was deleted: the row stays, anonymised, for the ledger (migrations/0010). */
    deletedAt: integer("deleted_at"),
    /** Set when a deleted account's purge has finished (migrations/0020). */
    purgedAt: integer("purged_at"),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email), index("users_created_at").on(t.createdAt)],
);

export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  expiresAt: integer("expires_at").notNull(),
  createdAt: integer("created_at").notNull(),
  userAgent: text("user_agent"),
  /** SHA-256 of the OAuth state of a Google re-authentication this session started, and when (migration 0013). */
  reauthState: text("reauth_state"),
  reauthStateAt: integer("reauth_state_at"),
  /** When Google last confirmed this session's user: a deletion proof for 5 minutes, used once. */
  reauthAt: integer("reauth_at"),
});

export const creditGrants = sqliteTable("credit_grants", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  source: text("source", { enum: ["signup", "plan", "admin"] }).notNull(),
  amount: integer("amount").notNull(),
  remaining: integer("remaining").notNull(),
  /** Credits of a reversed payment that were out in jobs then: held back when they come back (migration 0037). */
  owed: integer("owed").notNull().default(0),
  expiresAt: integer("expires_at").notNull(),
  createdAt: integer("created_at").notNull(),
});

export interface Allocation {
  grantId: string;
  amount: number;
}

export const creditReservations = sqliteTable("credit_reservations", {
  key: text("key").primaryKey(),
  userId: text("user_id").notNull(),
  amount: integer("amount").notNull(),
  allocations: text("allocations", { mode: "json" }).$type<Allocation[]>().notNull(),
  status: text("status", { enum: ["held", "committed", "refunded"] }).notNull(),
  createdAt: integer("created_at").notNull(),
  settledAt: integer("settled_at"),
});

export type LedgerKind = "grant" | "reserve" | "commit" | "refund" | "expire" | "adjust";

export const creditLedger = sqliteTable("credit_ledger", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  kind: text("kind", { enum: ["grant", "reserve", "commit", "refund", "expire", "adjust"] }).notNull(),
  amount: integer("amount").notNull(),
  grantId: text("grant_id"),
  reservationKey: text("reservation_key"),
  reason: text("reason").notNull(),
  idempotencyKey: text("idempotency_key").notNull(),
  actorId: text("actor_id"),
  createdAt: integer("created_at").notNull(),
});

export const healthChecks = sqliteTable("health_checks", {
  id: text("id").primaryKey(),
  checkedAt: integer("checked_at").notNull(),
});

export type User = typeof users.$inferSelect;

// --- Accounts (migrations/0002_accounts.sql) ---

export const emailTokens = sqliteTable("email_tokens", {
  id: text("id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  purpose: text("purpose", { enum: ["verify_email", "reset_password"] }).notNull(),
  email: text("email").notNull(),
  redirectTo: text("redirect_to"),
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
  createdAt: integer("created_at").notNull(),
});

export type EmailTokenPurpose = (typeof emailTokens.$inferSelect)["purpose"];

// ---- Admin console ----

export type AuditAction =
  | "credits.grant"
  | "credits.remove"
  | "verification.resend"
  | "sessions.revoke"
  | "role.grant"
  | "role.remove"
  | "api_key.revoke";

export const auditLog = sqliteTable("audit_log", {
  id: text("id").primaryKey(),
  actorId: text("actor_id"),
  actorEmail: text("actor_email").notNull(),
  action: text("action").$type<AuditAction>().notNull(),
  targetUserId: text("target_user_id").notNull(),
  reason: text("reason").notNull(),
  details: text("details", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
  createdAt: integer("created_at").notNull(),
});

// --- Public site: contact form (migrations/0005_contact.sql) ---

export const contactMessages = sqliteTable(
  "contact_messages",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    email: text("email").notNull(),
    message: text("message").notNull(),
    userId: text("user_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: integer("created_at").notNull(),
    mailedAt: integer("mailed_at"),
  },
  (t) => [index("contact_messages_created_at").on(t.createdAt)],
);

// ---------------------------------------------------------------------------
// Photo library (migrations/0004_photos.sql): folders, photos, upload sessions.

export const folders = sqliteTable("folders", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  name: text("name").notNull(),
  createdAt: integer("created_at").notNull(),
  /** Optional listing details (migrations/0010). */
  listingAddress: text("listing_address"),
  mlsNumber: text("mls_number"),
  /** The listing's look (migrations/0017): a staged version sent as the provider's style reference, and how strongly. */
  lookVersionId: text("look_version_id"),
  lookStrength: real("look_strength"),
  /** The MLS profile the listing follows; null: the account's (migrations/0015, app/shared/mls-profiles.ts). */
  mlsProfile: text("mls_profile"),
  listingStatus: text("listing_status", { enum: ["active", "pending", "sold"] })
    .notNull()
    .default("active"),
  soldAt: integer("sold_at"),
  /** Days after being marked sold that its original pages close, and the moment they do. */
  originalsCloseDays: integer("originals_close_days"),
  originalsCloseAt: integer("originals_close_at"),
  /** The team the folder belongs to (a shared listing); null: its owner's personal folder (migrations/0030). */
  teamId: text("team_id"),
});

export type PhotoContentType = "image/jpeg" | "image/png";

export const photos = sqliteTable("photos", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  folderId: text("folder_id"),
  name: text("name").notNull(),
  originalKey: text("original_key").notNull(),
  thumbKey: text("thumb_key").notNull(),
  contentType: text("content_type", { enum: ["image/jpeg", "image/png"] }).notNull(),
  bytes: integer("bytes").notNull(),
  width: integer("width").notNull(),
  height: integer("height").notNull(),
  thumbWidth: integer("thumb_width").notNull(),
  thumbHeight: integer("thumb_height").notNull(),
  processedKey: text("processed_key"),
  processedThumbKey: text("processed_thumb_key"),
  processedContentType: text("processed_content_type"),
  processedAt: integer("processed_at"),
  /** When its owner last chose the version it shows: a result asked for before then does not replace it. */
  chosenAt: integer("chosen_at"),
  createdAt: integer("created_at").notNull(),
  trashedAt: integer("trashed_at"),
  /** Set when its deletion for good began; a restore is then refused. */
  purgingAt: integer("purging_at"),
});

export type UploadStatus = "open" | "completing" | "completed" | "aborted" | "rejected" | "expired";

export const uploadSessions = sqliteTable("upload_sessions", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  photoId: text("photo_id").notNull(),
  name: text("name").notNull(),
  contentType: text("content_type", { enum: ["image/jpeg", "image/png"] }).notNull(),
  declaredBytes: integer("declared_bytes").notNull(),
  chunkSize: integer("chunk_size").notNull(),
  chunkCount: integer("chunk_count").notNull(),
  status: text("status", { enum: ["open", "completing", "completed", "aborted", "rejected", "expired"] }).notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export type Photo = typeof photos.$inferSelect;
export type Folder = typeof folders.$inferSelect;
export type UploadSession = typeof uploadSessions.$inferSelect;

// ---- Payments (migrations/0003_payments.sql) ----

export const stripeEvents = sqliteTable("stripe_events", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
  userId: text("user_id"),
  eventCreatedAt: integer("event_created_at").notNull(),
  outcome: text("outcome", { enum: ["applied", "ignored"] }).notNull(),
  processedAt: integer("processed_at").notNull(),
});

export const subscriptions = sqliteTable("subscriptions", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  customerId: text("customer_id").notNull(),
  planId: text("plan_id").notNull(),
  interval: text("interval", { enum: ["month", "year"] }).notNull(),
  status: text("status").notNull(),
  cancelAtPeriodEnd: integer("cancel_at_period_end", { mode: "boolean" }).notNull().default(false),
  currentPeriodStart: integer("current_period_start"),
  currentPeriodEnd: integer("current_period_end"),
  endedAt: integer("ended_at"),
  stateVersion: integer("state_version").notNull().default(0),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  /** When the current credit window began, and the most plan credits granted in it (migrations/0009). */
  windowStart: integer("window_start"),
  windowCredits: integer("window_credits").notNull().default(0),
});

export const paidPeriods = sqliteTable("paid_periods", {
  invoiceId: text("invoice_id").primaryKey(),
  userId: text("user_id").notNull(),
  subscriptionId: text("subscription_id").notNull(),
  planId: text("plan_id").notNull(),
  interval: text("interval", { enum: ["month", "year"] }).notNull(),
  credits: integer("credits").notNull(),
  periodStart: integer("period_start"),
  periodEnd: integer("period_end"),
  monthsGranted: integer("months_granted").notNull().default(0),
  nextGrantAt: integer("next_grant_at"),
  createdAt: integer("created_at").notNull(),
  billingReason: text("billing_reason"),
  /** The invoice total in cents after prorations and discounts, before any customer balance (negative: a credit). */
  invoiceTotal: integer("invoice_total"),
  /** Credits granted for the first month (0 for a downgrade or a $0 invoice). */
  firstGrant: integer("first_grant").notNull().default(0),
  paymentIntentId: text("payment_intent_id"),
});

/** Which PaymentIntent paid which invoice, from invoice_payment.paid (migrations/0038). */
export const invoicePayments = sqliteTable("invoice_payments", {
  id: text("id").primaryKey(),
  invoiceId: text("invoice_id").notNull(),
  paymentIntentId: text("payment_intent_id").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** A refund or dispute that took back a payment's unspent credits (migrations/0009). */
export const paymentReversals = sqliteTable("payment_reversals", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  paymentIntentId: text("payment_intent_id").notNull(),
  cause: text("cause", { enum: ["refund", "dispute"] }).notNull(),
  granted: integer("granted").notNull(),
  due: integer("due").notNull(),
  taken: integer("taken").notNull(),
  alreadySpent: integer("already_spent").notNull(),
  restoredAt: integer("restored_at"),
  createdAt: integer("created_at").notNull(),
});

export type SubscriptionRow = typeof subscriptions.$inferSelect;
export type PaidPeriodRow = typeof paidPeriods.$inferSelect;

// ---- AI jobs and photo versions (migrations/0007_jobs.sql) ----

export type JobKind = "stage" | "sky" | "removal";
export type JobStatus = "queued" | "running" | "succeeded" | "failed";
export type JobParams = {
  roomType?: string;
  designStyle?: string;
  skyType?: string;
  /** "original" or the id of the version the job starts from. */
  source?: string;
  /** Advanced customization (plans that include it): the provider's codes. */
  colorScheme?: string;
  specialityDecor?: string;
  /** The person's instruction; the provider receives it as a whole directive (stagingDirective). */
  prompt?: string;
  /** The provider's design_creativity, 0-1: how far the result may depart from the photo. */
  designCreativity?: number;
  /** The provider's seed: a re-roll keeps every choice and takes a new one (migrations/0011_listing.sql). */
  seed?: number;
  /** Variations: how many results the one provider call of the job's group asks for (1-4). */
  variations?: number;
  /**
   * The listing's look when the job was asked for (migrations/0017): the staged version sent as the provider's
   * style reference, and its strength (design_style_image_strength).
   */
  styleReference?: StyleReference;
  /** A removal's brush mask: the id of one of the photo's stored masks, sent as mask_image_url (ADR 0195). */
  mask?: string;
};

/** A staged version of the user's, sent to the provider as a style reference (docs/decisions/0190). */
export interface StyleReference {
  photoId: string;
  versionId: string;
  strength: number;
}

export const jobs = sqliteTable("jobs", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  photoId: text("photo_id").notNull(),
  kind: text("kind", { enum: ["stage", "sky", "removal"] }).notNull(),
  params: text("params", { mode: "json" }).$type<JobParams>().notNull(),
  status: text("status", { enum: ["queued", "running", "succeeded", "failed"] }).notNull(),
  error: text("error"),
  versionId: text("version_id"),
  attempts: integer("attempts").notNull().default(0),
  createdAt: integer("created_at").notNull(),
  startedAt: integer("started_at"),
  finishedAt: integer("finished_at"),
  // migrations/0011_listing.sql
  batchId: text("batch_id"),
  groupId: text("group_id"),
  priority: integer("priority").notNull().default(0),
  cost: integer("cost").notNull().default(1),
  rerollOf: text("reroll_of"),
  retryOf: text("retry_of"),
  // migrations/0020_operations.sql: the request that asked for the job (its logs and error reports carry it).
  requestId: text("request_id"),
  // migrations/0030_teams.sql: the team whose pool pays for the job (its own reservation is then 0 credits).
  teamId: text("team_id"),
});

/** Many photos started in one step (migrations/0011_listing.sql). */
export const batches = sqliteTable("batches", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  folderId: text("folder_id"),
  designStyle: text("design_style").notNull(),
  createdAt: integer("created_at").notNull(),
});
export type Batch = typeof batches.$inferSelect;

export const photoVersions = sqliteTable("photo_versions", {
  id: text("id").primaryKey(),
  photoId: text("photo_id").notNull(),
  userId: text("user_id").notNull(),
  jobId: text("job_id").notNull(),
  kind: text("kind", { enum: ["stage", "sky", "removal"] }).notNull(),
  params: text("params", { mode: "json" }).$type<JobParams>().notNull(),
  key: text("key").notNull(),
  thumbKey: text("thumb_key").notNull(),
  contentType: text("content_type").notNull(),
  bytes: integer("bytes").notNull(),
  width: integer("width").notNull(),
  height: integer("height").notNull(),
  createdAt: integer("created_at").notNull(),
  // migrations/0019_structure_check.sql: what the structure check said of it (null: made before the check). Written
  // through versionValues (jobs/job-rows.ts); read as structureVerdict below, which also knows a flagged result.
  storedVerdict: text("structure_verdict", { enum: ["passed", "refused", "kept", "unchecked"] }),
  structureScore: real("structure_score"),
  // migrations/0021_structure_flagged.sql (docs/decisions/0215-flag-when-unsure.md): why a delivered result is flagged,
  // and the verdict as the code reads it, computed by D1 from the two columns.
  structureFlagged: text("structure_flagged", { enum: ["score", "daily_limit"] }),
  structureVerdict: text("structure_outcome", {
    enum: ["passed", "flagged", "refused", "kept", "unchecked"],
  }).generatedAlwaysAs(
    sql`CASE WHEN structure_verdict = 'passed' AND structure_flagged IN ('score', 'daily_limit') THEN 'flagged' ELSE structure_verdict END`,
    { mode: "virtual" },
  ),
  /** Where the check saw the room change ("upper left", ...); null when it said nothing. */
  structureReasons: text("structure_reasons", { mode: "json" }).$type<string[]>(),
  /** "I checked the walls and windows": when, and by which user, a flagged result was confirmed. */
  structureConfirmedAt: integer("structure_confirmed_at"),
  structureConfirmedBy: text("structure_confirmed_by"),
  /** migrations/0023: the R2 key of the check's change map (docs/decisions/0260); null when none was stored. */
  structureMapKey: text("structure_map_key"),
  /** migrations/0023: when its credit went back through "This result changed the room" (docs/decisions/0261). */
  structureReturnedAt: integer("structure_returned_at"),
  /** migrations/0033: the member whose job made it (a teammate, in a team listing); null: made by `userId`. */
  createdBy: text("created_by"),
});

/**
 * "This result changed the room" (migrations/0023, docs/decisions/0261): one row per version whose credit went back,
 * with the R2 prefix of the pair kept as a candidate for the labelled set when its owner consented.
 */
export const structureRecourses = sqliteTable("structure_recourses", {
  versionId: text("version_id").primaryKey(),
  userId: text("user_id").notNull(),
  photoId: text("photo_id").notNull(),
  kind: text("kind").notNull(),
  verdict: text("verdict").notNull(),
  score: real("score"),
  candidatePrefix: text("candidate_prefix"),
  createdAt: integer("created_at").notNull(),
});

export type StructureVerdict = NonNullable<PhotoVersion["structureVerdict"]>;
export type Job = typeof jobs.$inferSelect;
export type PhotoVersion = typeof photoVersions.$inferSelect;

// ---- The public API (migrations/0008_api_keys.sql) ----

export type ApiScope = "stage" | "read";
/** Why a key was revoked (migrations/0014_api_key_revocation.sql); null for keys revoked before it was recorded. */
export type ApiKeyRevokedReason = "owner" | "password_reset" | "sessions_revoked" | "admin" | "account_deleted";

export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  tokenHash: text("token_hash").notNull(),
  prefix: text("prefix").notNull(),
  name: text("name").notNull(),
  scopes: text("scopes", { mode: "json" }).$type<ApiScope[]>().notNull(),
  createdAt: integer("created_at").notNull(),
  lastUsedAt: integer("last_used_at"),
  revokedAt: integer("revoked_at"),
  revokedReason: text("revoked_reason").$type<ApiKeyRevokedReason>(),
  /** The key's callback signing secret, sealed under the signing key named next; NULL: the derived one (0016). */
  callbackSecret: text("callback_secret"),
  callbackSecretKey: text("callback_secret_key"),
  /** The secret a rotation replaced, sealed as above; it also signs until `previousCallbackUntil` (0042). */
  previousCallbackSecret: text("previous_callback_secret"),
  previousCallbackSecretKey: text("previous_callback_secret_key"),
  previousCallbackUntil: integer("previous_callback_until"),
  /** A team key's team, its maker, its uploads' listing and its limit per period; NULL: a personal key (0032). */
  teamId: text("team_id"),
  createdBy: text("created_by"),
  folderId: text("folder_id"),
  creditLimit: integer("credit_limit"),
});

export const apiIdempotency = sqliteTable("api_idempotency", {
  userId: text("user_id").notNull(),
  key: text("key").notNull(),
  requestHash: text("request_hash").notNull(),
  status: integer("status"),
  response: text("response"),
  createdAt: integer("created_at").notNull(),
});

export const apiCallbacks = sqliteTable("api_callbacks", {
  jobId: text("job_id").primaryKey(),
  userId: text("user_id").notNull(),
  apiKeyId: text("api_key_id").notNull(),
  url: text("url").notNull(),
  status: text("status", { enum: ["waiting", "pending", "delivered", "failed"] }).notNull(),
  payload: text("payload"),
  attempts: integer("attempts").notNull().default(0),
  nextAt: integer("next_at"),
  lastAttemptAt: integer("last_attempt_at"),
  lastStatus: integer("last_status"),
  lastError: text("last_error"),
  createdAt: integer("created_at").notNull(),
  finishedAt: integer("finished_at"),
  deliveredAt: integer("delivered_at"),
});

export type ApiKey = typeof apiKeys.$inferSelect;
export type ApiCallback = typeof apiCallbacks.$inferSelect;

// ---- MLS output and the agent's data (migrations/0010_mls.sql) ----

export type LabelCorner = "top-left" | "top-right" | "bottom-left" | "bottom-right";
export type LabelSize = "small" | "medium" | "large";
export type LabelTone = "light" | "dark";

/** The account's disclosure settings: its MLS profile and the label's customisation (migrations/0015). */
export const labelSettings = sqliteTable("label_settings", {
  userId: text("user_id").primaryKey(),
  profile: text("profile").notNull().default("california"),
  /** Replaces the first line of the profile's label; null: the profile's wording. */
  text: text("text"),
  corner: text("corner", { enum: ["top-left", "top-right", "bottom-left", "bottom-right"] })
    .notNull()
    .default("bottom-right"),
  size: text("size", { enum: ["small", "medium", "large"] })
    .notNull()
    .default("medium"),
  tone: text("tone", { enum: ["light", "dark"] })
    .notNull()
    .default("dark"),
  qr: integer("qr", { mode: "boolean" }).notNull().default(true),
  updatedAt: integer("updated_at").notNull(),
});

export const originalLinks = sqliteTable("original_links", {
  token: text("token").primaryKey(),
  userId: text("user_id").notNull(),
  photoId: text("photo_id").notNull(),
  versionId: text("version_id").notNull(),
  createdAt: integer("created_at").notNull(),
  revokedAt: integer("revoked_at"),
  /** Why it closed (migrations/0015); null for pages closed before that was recorded. */
  revokedReason: text("revoked_reason", { enum: ["owner", "listing_closed", "account_deleted"] }),
});

export const dataExports = sqliteTable("data_exports", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  status: text("status", { enum: ["queued", "ready", "failed"] }).notNull(),
  objectKey: text("object_key"),
  bytes: integer("bytes"),
  createdAt: integer("created_at").notNull(),
  readyAt: integer("ready_at"),
  expiresAt: integer("expires_at"),
});

export type OriginalLink = typeof originalLinks.$inferSelect;
export type DataExport = typeof dataExports.$inferSelect;

// ---- Operations (migrations/0020_operations.sql, docs/decisions/0184-operations-aggregates.md) ----

/** Counters per hour, kept as jobs, provider calls and webhooks end. */
export const opsCounts = sqliteTable(
  "ops_counts",
  {
    hour: integer("hour").notNull(),
    metric: text("metric").notNull(),
    cause: text("cause").notNull().default(""),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.hour, t.metric, t.cause] })],
);

/** Each run of the daily cron. */
export const cronRuns = sqliteTable("cron_runs", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  startedAt: integer("started_at").notNull(),
  finishedAt: integer("finished_at").notNull(),
  ok: integer("ok", { mode: "boolean" }).notNull(),
  failed: text("failed"),
  requestId: text("request_id").notNull(),
});

/** The landing page's measured figures, one row recomputed at most hourly (migrations/0022_site_figures.sql). */
export const siteFiguresRows = sqliteTable("site_figures", {
  id: text("id").primaryKey(),
  /** The answer of GET /api/figures (app/shared/site-figures.ts), as JSON; null until first computed. */
  figures: text("figures"),
  computedAt: integer("computed_at").notNull().default(0),
  claimedAt: integer("claimed_at"),
});

export * from "./teams";
