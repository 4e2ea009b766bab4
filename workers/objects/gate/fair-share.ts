// Who gets the next provider slot (docs/decisions/0186-one-provider-gate.md). Pure, so the rule is tested alone.
//
// The rule: among the users waiting, the one holding the fewest slots now goes first (a round is one slot held, so
// a user with one photo waiting beside a batch that holds slots is served first); at the same round a Professional
// user's request goes first (DECISIONS: Professional jobs get queue priority); then the user whose first request has
// waited longest. Within one user, its own requests go in the order they arrived (the user's object already sends
// them Professional first, then oldest first).

export interface Waiting {
  /** Order of arrival at the gate (monotonic), across all users. */
  seq: number;
  userId: string;
  /** 1 for Professional, 0 otherwise. */
  priority: number;
}

/** The request to grant next, or undefined when none waits. `held`: slots each user holds now. */
export function nextGrant<W extends Waiting>(waiting: Iterable<W>, held: ReadonlyMap<string, number>): W | undefined {
  // Each user's first request stands for the user.
  const heads = new Map<string, W>();
  for (const w of waiting) {
    const head = heads.get(w.userId);
    if (!head || w.seq < head.seq) heads.set(w.userId, w);
  }
  let best: W | undefined;
  for (const w of heads.values()) {
    if (!best || before(w, best, held)) best = w;
  }
  return best;
}

function before(a: Waiting, b: Waiting, held: ReadonlyMap<string, number>): boolean {
  const ra = held.get(a.userId) ?? 0;
  const rb = held.get(b.userId) ?? 0;
  if (ra !== rb) return ra < rb;
  if (a.priority !== b.priority) return a.priority > b.priority;
  return a.seq < b.seq;
}
