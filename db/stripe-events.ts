import type { Database } from "./client";
import { stripeEvents } from "./schema";

// The record of a verified Stripe event, written in the batch that applies it (or ignores it): the event id is the
// key that makes a redelivery change nothing (docs/decisions/0021-webhook-idempotency-and-ordering.md).

export interface EventMeta {
  eventId: string;
  type: string;
  /** Stripe's event.created, in milliseconds. */
  createdAt: number;
}

/** The insert of an event's record; `userId` null for an event about no person (a team's, an invoice's payment). */
export function recordEvent(
  db: Database,
  event: EventMeta,
  outcome: "applied" | "ignored",
  now: number,
  userId: string | null = null,
) {
  return db.insert(stripeEvents).values({
    id: event.eventId,
    type: event.type,
    userId,
    eventCreatedAt: event.createdAt,
    outcome,
    processedAt: now,
  });
}
