import type { Database } from "@db/client";
import type { Stmt } from "@workers/objects/user/batch";
import type { ViewEffect } from "./changes";
import { MAX_GROUP, type ReserveAnswer, type ReserveRequest, reserveGroup } from "./group";
import type { CreditView } from "./view";

// The credit desk: the part of the user's object that owns its credit state,
// the view of the balance and open grants it keeps between changes while it is
// exact, and the reservations waiting for their group turn. The object's front
// (user-object.ts) decides when a turn runs; the desk decides what it writes.
// docs/decisions/0135-ledger-group-commit.md

/** A reservation as it waits for its turn: its rows are made once the group's `now` is known. */
export interface PendingRequest extends Omit<ReserveRequest, "writes"> {
  writes?: (now: number) => Stmt[];
}

interface Pending {
  userId: string;
  request: PendingRequest;
  resolve: (answer: ReserveAnswer) => void;
  reject: (err: unknown) => void;
}

/** What a group turn did, for the front to follow up (waiters, alarm, live balance). */
export interface GroupOutcome {
  /** Whether D1 changed (a reservation taken, or a grant expired on the way). */
  changed: boolean;
  /** The group only took new reservations, and nothing expired: their timeout is the one new reason to wake. */
  onlyReservations: boolean;
  /** The alarm for their timeout was set while the group's batch was written (`turn`'s `wakeEarly`). */
  alarmSet: boolean;
}

export class CreditDesk {
  /** The balance and open grants as of the last write, while exact; null: load it from D1 first. */
  #view: CreditView | null = null;
  #pending: Pending[] = [];

  constructor(private readonly db: Database) {}

  /** Applies what a change did to the view: kept, dropped, or replaced by the one it read. */
  apply(effect: ViewEffect): void {
    if (effect.view === "moved") this.#view = null;
    else if (effect.view === "read") this.#view = effect.as;
  }

  /** A change failed half-way (or threw): what it wrote is unknown, so the view is dropped. */
  forget(): void {
    this.#view = null;
  }

  /** Queues a reservation for the next group turn; resolves with its answer once that turn has written. */
  request(userId: string, request: PendingRequest): Promise<ReserveAnswer> {
    if (!Number.isInteger(request.amount) || request.amount <= 0) {
      return Promise.reject(new Error("reserve amount must be a positive integer"));
    }
    return new Promise((resolve, reject) => this.#pending.push({ userId, request, resolve, reject }));
  }

  get waiting(): number {
    return this.#pending.length;
  }

  /**
   * One group turn: decides up to MAX_GROUP waiting reservations of one user against the view and writes them in
   * one D1 batch (reserveGroup). Answers each request after `follow` (the front's waiters, alarm and live balance)
   * has run; on a failed write rejects them all, having written nothing, and drops the view.
   */
  async turn(
    now: () => number,
    before: (userId: string) => Promise<void>,
    follow: (userId: string, outcome: GroupOutcome) => Promise<void>,
    /** Sets the alarm for the reservations' timeout: run beside the group's D1 batch when it only reserves. */
    wakeEarly?: () => Promise<void>,
  ): Promise<void> {
    const taken = this.#pending.splice(0, MAX_GROUP);
    const userId = taken[0]?.userId;
    if (userId === undefined) return;
    const group = taken.filter((p) => p.userId === userId);
    for (const p of taken) if (p.userId !== userId) p.reject(new Error("UserObject called for a different user"));
    let answers: ReserveAnswer[];
    let outcome: GroupOutcome;
    try {
      await before(userId);
      const at = now();
      const requests = group.map(({ request: r }) => ({ ...r, writes: r.writes?.(at) }));
      const onlyReservations = requests.every((r) => r.writes === undefined);
      // The alarm's write overlaps the D1 round trips instead of following them: an alarm set for a group that then
      // takes nothing, or fails, finds nothing to do when it runs and sets the next one (as before ADR 0154's split;
      // docs/decisions/0241-the-reservations-alarm-beside-their-batch.md).
      const woke =
        onlyReservations && wakeEarly
          ? wakeEarly().then(
              () => true,
              () => false,
            )
          : Promise.resolve(false);
      const done = await reserveGroup(this.db, userId, this.#view, requests, at);
      const alarmSet = await woke;
      this.#view = done.view;
      answers = done.answers;
      outcome = {
        changed: done.wrote || done.expired,
        onlyReservations: onlyReservations && !done.expired,
        alarmSet,
      };
    } catch (err) {
      // Nothing of the batch was written (D1 batches are atomic); the view may be wrong now.
      this.#view = null;
      for (const p of group) p.reject(err);
      return;
    }
    try {
      await follow(userId, outcome);
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    group.forEach((p, i) => {
      const answer = answers[i];
      if (answer) p.resolve(answer);
      else p.reject(new Error("reservation group gave no answer"));
    });
  }
}
