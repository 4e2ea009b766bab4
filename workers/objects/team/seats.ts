import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { stripeEvents, teamMembers, teamNotices, teamSeatFacts, teams, users } from "@db/schema";
import { type EventMeta, recordEvent } from "@db/stripe-events";
import { escapeHtml, type Mailer } from "@workers/adapters/mail";
import { log } from "@workers/lib/log";
import { run, type Stmt } from "@workers/objects/user/batch";
import { and, asc, eq, isNull, lt, sql } from "drizzle-orm";
import { applySeatFact, type SeatFact, type SeatNotice, type SeatPool, seatFactKey } from "~/shared/seat-pool";
import { grantStatements } from "./pool";
import { reversalStatements } from "./reversals";

// A team's seats as Stripe's signed webhook tells them, applied inside the team's Durable Object, one at a time:
// the pure rule (app/shared/seat-pool.ts) reads the team row as its `SeatPool`, and what it answers is written in ONE
// D1 batch: the event's record, the invoice's key, the seats, the freeze, the pool's grant (its ledger key
// `seats:<invoiceId>` / `period:<invoiceId>` is unique) and one notice per member. A duplicate writes nothing more.
// docs/decisions/0291-seat-facts-applied-by-the-team-object.md

export type AppliedSeatFact = Exclude<SeatFact, { kind: "ignored" }>;
export type SeatEventMeta = EventMeta;
export interface SeatAnswer {
  /** "ignored": no such team (the webhook records the event as ignored). */
  outcome: "applied" | "ignored";
  duplicate: boolean;
  /** Notices were written and wait to be sent. */
  notify: boolean;
}

/** Sends after this many failed attempts stop; the row stays, unsent, for the operator. */
export const NOTICE_MAX_ATTEMPTS = 5;

const GRANT_REASON: Record<"period_paid" | "seats_changed", string> = {
  period_paid: "Seats paid for the period",
  seats_changed: "Seats added (prorated)",
};

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The words every member reads (the same for all, so they are bound once into the batch's INSERT … SELECT). */
export function noticeMail(notice: SeatNotice, team: { id: string; name: string; credits: number }, origin: string) {
  const link = `${origin}/teams/${encodeURIComponent(team.id)}`;
  if (notice.kind === "payment_failed") {
    const retry = notice.nextPaymentAttempt
      ? ` Stripe will try the card again on ${day(notice.nextPaymentAttempt)}.`
      : "";
    const lines = [
      `The team's payment of ${dollars(notice.amountDueCents)} for ${team.name} did not go through, so no new team job can start until it is paid.`,
      `Nothing is lost: the pool's ${team.credits} credits, the team's listings and their photos stay as they are.${retry}`,
      "The team's owner can update the payment method on the team's page:",
    ];
    return {
      subject: `${team.name}: the team's payment did not go through`,
      text: `${lines.join("\n\n")}\n${link}\n`,
      html: `${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join("")}<p><a href="${escapeHtml(link)}">Open the team</a></p>`,
    };
  }
  const line = `The team's payment for ${team.name} went through: team jobs can start again.`;
  return {
    subject: `${team.name}: the team's payment went through`,
    text: `${line}\n\n${link}\n`,
    html: `<p>${escapeHtml(line)}</p><p><a href="${escapeHtml(link)}">Open the team</a></p>`,
  };
}

/** Applies one verified seat fact to the team: once per event, once per invoice. */
export async function applySeats(
  db: Database,
  teamId: string,
  fact: AppliedSeatFact,
  event: SeatEventMeta,
  now: number,
  origin: string,
): Promise<SeatAnswer> {
  const key = seatFactKey(fact);
  const [teamRows, seenEvent, seenKey] = await db.batch([
    db.select().from(teams).where(eq(teams.id, teamId)),
    db.select({ id: stripeEvents.id }).from(stripeEvents).where(eq(stripeEvents.id, event.eventId)),
    db
      .select({ key: teamSeatFacts.key })
      .from(teamSeatFacts)
      .where(eq(teamSeatFacts.key, key ?? "")),
  ]);
  const team = teamRows[0];
  if (!team) return { outcome: "ignored", duplicate: false, notify: false };
  if (seenEvent[0]) return { outcome: "applied", duplicate: true, notify: false };
  if (fact.kind === "seat_reversal" || fact.kind === "seat_reversal_undone") {
    await run(db, [recordEvent(db, event, "applied", now), ...(await reversalStatements(db, team, fact, now))]);
    return { outcome: "applied", duplicate: false, notify: false };
  }

  const pool: SeatPool = {
    seats: team.seats,
    seatsAt: team.seatsAt,
    frozen: team.frozenAt !== null,
    frozenAt: team.frozenChangedAt,
    failedInvoice: team.failedInvoice,
    invoices: key && seenKey[0] ? [key] : [],
  };
  const out = applySeatFact(pool, fact);
  const record = recordEvent(db, event, out.duplicate ? "ignored" : "applied", now);
  if (out.duplicate) {
    await run(db, [record]);
    return { outcome: "applied", duplicate: true, notify: false };
  }

  const next = out.pool;
  const ended = fact.kind === "seat_status" && fact.status === "canceled";
  let subscription = team.stripeSubscriptionId;
  if (subscription === null || fact.kind === "period_paid") subscription = fact.subscription;
  if (ended && subscription === fact.subscription) subscription = null;
  const writes: Stmt[] = [
    record,
    db
      .update(teams)
      .set({
        seats: Math.max(1, next.seats),
        seatsAt: next.seatsAt,
        frozenAt: next.frozen ? (team.frozenAt ?? now) : null,
        frozenChangedAt: next.frozenAt,
        failedInvoice: next.failedInvoice,
        // A new paid period starts the members' limits over (docs/decisions/0270-team-credit-pool.md).
        periodStart:
          fact.kind === "period_paid" && fact.periodStart > team.periodStart ? fact.periodStart : team.periodStart,
        stripeCustomerId: team.stripeCustomerId ?? fact.customerId,
        stripeSubscriptionId: subscription,
        updatedAt: now,
      })
      .where(eq(teams.id, teamId)),
  ];
  if (key && fact.kind !== "seat_status") {
    writes.push(
      db.insert(teamSeatFacts).values({ key, teamId, kind: fact.kind, eventId: event.eventId, appliedAt: now }),
    );
  }
  if (out.grant && (fact.kind === "period_paid" || fact.kind === "seats_changed")) {
    const reason = `${GRANT_REASON[fact.kind]}: ${fact.quantity} ${fact.quantity === 1 ? "seat" : "seats"}`;
    writes.push(
      ...grantStatements(db, teamId, { amount: out.grant.credits, key: out.grant.key, reason, actorId: null }, now),
    );
  }
  if (out.notice) {
    const credits = team.credits + (out.grant?.credits ?? 0);
    const mail = noticeMail(out.notice, { id: team.id, name: team.name, credits }, origin);
    const noticeKey = out.notice.kind === "payment_failed" ? `failed:${out.notice.invoiceId}` : `ok:${event.eventId}`;
    writes.push(
      db
        .insert(teamNotices)
        .select(
          db
            .select({
              id: sql<string>`lower(hex(randomblob(16)))`.as("id"),
              teamId: teamMembers.teamId,
              noticeKey: sql<string>`${noticeKey}`.as("notice_key"),
              userId: teamMembers.userId,
              email: users.email,
              kind: sql<SeatNotice["kind"]>`${out.notice.kind}`.as("kind"),
              subject: sql<string>`${mail.subject}`.as("subject"),
              bodyText: sql<string>`${mail.text}`.as("body_text"),
              bodyHtml: sql<string>`${mail.html}`.as("body_html"),
              createdAt: sql<number>`${now}`.as("created_at"),
              attempts: sql<number>`0`.as("attempts"),
              sentAt: sql<null>`NULL`.as("sent_at"),
            })
            .from(teamMembers)
            .innerJoin(users, eq(users.id, teamMembers.userId))
            .where(and(eq(teamMembers.teamId, teamId), isNull(teamMembers.removedAt))),
        )
        .onConflictDoNothing(),
    );
  }
  await run(db, writes);
  return { outcome: "applied", duplicate: false, notify: out.notice !== null };
}

/**
 * Sends the team's unsent notices, each once: all at once through the mail adapter, then one batch marks what went
 * out; a failed send counts an attempt and waits for the object's alarm. Answers how many are still to send.
 */
export async function deliverNotices(db: Database, mailer: Mailer, teamId: string, now: number): Promise<number> {
  const unsent = and(
    eq(teamNotices.teamId, teamId),
    isNull(teamNotices.sentAt),
    lt(teamNotices.attempts, NOTICE_MAX_ATTEMPTS),
  );
  const rows = await db.select().from(teamNotices).where(unsent).orderBy(asc(teamNotices.createdAt)).limit(50).all();
  if (rows.length === 0) return 0;
  const sent = await Promise.allSettled(
    rows.map((r) => mailer.send({ to: r.email, subject: r.subject, text: r.bodyText, html: r.bodyHtml })),
  );
  const ok = rows.filter((_, i) => sent[i]!.status === "fulfilled").map((r) => r.id);
  const failed = rows.filter((_, i) => sent[i]!.status === "rejected").map((r) => r.id);
  const writes: Stmt[] = [];
  if (ok.length > 0) writes.push(db.update(teamNotices).set({ sentAt: now }).where(inList(teamNotices.id, ok)));
  if (failed.length > 0) {
    log.warn("team notice not sent", { teamId, failed: failed.length });
    writes.push(
      db
        .update(teamNotices)
        .set({ attempts: sql`${teamNotices.attempts} + 1` })
        .where(inList(teamNotices.id, failed)),
    );
  }
  await run(db, writes);
  const left = await db.select({ n: sql<number>`count(*)` }).from(teamNotices).where(unsent).get();
  return Number(left?.n ?? 0);
}
