import { nextGrant, type Waiting } from "@workers/objects/gate/fair-share";
import { describe, expect, it } from "vitest";

// Who gets the next provider slot (docs/decisions/0186-one-provider-gate.md): the fewest slots held first, then
// Professional, then the longest waiting; a user's own requests in their order.

const w = (seq: number, userId: string, priority = 0): Waiting => ({ seq, userId, priority });
const held = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe("fair share", () => {
  it("grants nothing when nobody waits", () => {
    expect(nextGrant([], held({ a: 1 }))).toBeUndefined();
  });

  it("a user holding fewer slots goes first, however long a batch has waited", () => {
    const waiting = [w(1, "batch"), w(2, "batch"), w(3, "batch"), w(9, "single")];
    expect(nextGrant(waiting, held({ batch: 3 }))?.userId).toBe("single");
    expect(nextGrant(waiting, held({ batch: 1, single: 1 }))?.userId).toBe("batch");
  });

  it("at the same round a Professional user goes first, then the one waiting longest", () => {
    const waiting = [w(1, "basic"), w(2, "pro", 1), w(3, "other")];
    expect(nextGrant(waiting, held({}))?.userId).toBe("pro");
    expect(nextGrant(waiting, held({ pro: 1 }))?.userId).toBe("basic");
    // A Professional user a round ahead waits for the others to catch up.
    expect(nextGrant(waiting, held({ pro: 2, basic: 1, other: 1 }))?.userId).toBe("basic");
  });

  it("a user's own requests are granted in the order they arrived", () => {
    expect(nextGrant([w(7, "a"), w(4, "a"), w(5, "b")], held({ b: 1 }))?.seq).toBe(4);
  });

  it("served one slot at a time, three batches and one photo take turns: the photo is served in the first round", () => {
    const waiting = new Map<number, Waiting>();
    let seq = 0;
    for (const user of ["a", "b", "c"]) for (let i = 0; i < 5; i++) waiting.set(++seq, w(seq, user));
    waiting.set(++seq, w(seq, "photo"));
    const counts = new Map<string, number>();
    const order: string[] = [];
    // Slots are granted and kept (nobody releases): each grant is one more round for its user.
    for (let i = 0; i < 8; i++) {
      const next = nextGrant(waiting.values(), counts)!;
      waiting.delete(next.seq);
      counts.set(next.userId, (counts.get(next.userId) ?? 0) + 1);
      order.push(next.userId);
    }
    expect(order).toEqual(["a", "b", "c", "photo", "a", "b", "c", "a"]);
  });
});
