import type { Database } from "@db/client";
import type { Along } from "@workers/objects/user/batch";
import type { GrantInput } from "./grants";
import * as grants from "./grants";
import type { ReserveAnswer } from "./group";
import { expireGrants, type LedgerResult } from "./ledger-rows";
import * as reservations from "./reservations";
import type { CreditView } from "./view";

// Credit operations as changes of the user's data. Each says, in its type, what
// it did to the credit desk's view of the balance and grants (desk.ts), and the
// object's change queue takes nothing else (UserObject#change): a change that
// moves credits cannot forget to say so. docs/decisions/0135-ledger-group-commit.md

/** What a change did to the desk's view of the balance and the open grants. */
export type ViewEffect =
  /** Balance and grants as they were (a commit, a job row, a repeat): the view stays. */
  | { view: "untouched" }
  /** It moved them: the view is dropped and loaded again when next needed. */
  | { view: "moved" }
  /** It moved them and read the view at the end of its own batch: exact, it replaces the view. */
  | { view: "read"; as: CreditView | null };

/** A change's answer and its effect on the view. */
export interface Changed<T> {
  answer: T;
  effect: ViewEffect;
}

export const untouched = <T>(answer: T): Changed<T> => ({ answer, effect: { view: "untouched" } });
export const moved = <T>(answer: T): Changed<T> => ({ answer, effect: { view: "moved" } });
export const withView = <T>(answer: T, view: CreditView | null): Changed<T> => ({
  answer,
  effect: { view: "read", as: view },
});

/** The effect of changes made one after another in one turn: the last that touched the view decides. */
export function after(...effects: ViewEffect[]): ViewEffect {
  return effects.reduce<ViewEffect>((acc, e) => (e.view === "untouched" ? acc : e), { view: "untouched" });
}

/** Another change's answer carried along, its effect kept: `later` runs after it in the same turn. */
export async function andThen<A, B>(first: Changed<A>, later: (a: A) => Promise<Changed<B>>): Promise<Changed<B>> {
  const next = await later(first.answer);
  return { answer: next.answer, effect: after(first.effect, next.effect) };
}

/** A result with its `view` (read at the end of its batch) as a change; the caller never sees the view. */
function viewOf<A extends object>(
  result: LedgerResult<A & { view?: CreditView | null }>,
): Changed<LedgerResult<Omit<A, "view">>> {
  if (!result.ok) return untouched(result);
  const { view, ...answer } = result;
  const plain = answer as LedgerResult<Omit<A, "view">>;
  return view === undefined ? untouched(plain) : withView(plain, view);
}

export async function grant(
  db: Database,
  userId: string,
  input: GrantInput,
  now: number,
): Promise<Changed<LedgerResult<{ duplicate: boolean; recorded?: number }>>> {
  return viewOf(await grants.grant(db, userId, input, now));
}

export async function grantSignupCredits(
  db: Database,
  userId: string,
  amount: number,
  now: number,
): Promise<Changed<LedgerResult<{ granted: number }>>> {
  return viewOf(await grants.grantSignupCredits(db, userId, amount, now));
}

export async function deduct(
  ...args: Parameters<typeof grants.deduct>
): Promise<Changed<Awaited<ReturnType<typeof grants.deduct>>>> {
  return moved(await grants.deduct(...args));
}

/** A commit settles a held reservation: the credits were taken when it was reserved. */
export async function commit(
  db: Database,
  userId: string,
  key: string,
  now: number,
  along: Along = {},
): Promise<Changed<LedgerResult<{ status: string; read: unknown[] }>>> {
  return untouched(await reservations.commit(db, userId, key, now, along));
}

export async function commitHeld(
  db: Database,
  userId: string,
  held: reservations.Held,
  now: number,
  along: Along = {},
): Promise<Changed<LedgerResult<{ status: string; read: unknown[] }>>> {
  return untouched(await reservations.commitHeld(db, userId, held, now, along));
}

export async function refund(
  db: Database,
  userId: string,
  key: string,
  reason: string,
  now: number,
  along: Along = {},
): Promise<Changed<LedgerResult<{ status: string }>>> {
  return moved(await reservations.refund(db, userId, key, reason, now, along));
}

/** A single reservation outside a group (the public API's job, with its rows along). */
export async function reserve(...args: Parameters<typeof reservations.reserve>): Promise<Changed<ReserveAnswer>> {
  return moved(await reservations.reserve(...args));
}

export async function expire(db: Database, userId: string, now: number): Promise<Changed<number>> {
  const removed = await expireGrants(db, userId, now);
  return removed > 0 ? moved(removed) : untouched(removed);
}
