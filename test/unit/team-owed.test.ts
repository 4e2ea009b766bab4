import { outUnclaimed } from "@workers/objects/team/held-back";
import { describe, expect, it } from "vitest";

describe("outUnclaimed (ADR 0352)", () => {
  const held = [
    { at: 10, amount: 2 },
    { at: 30, amount: 3 },
  ];

  it("is every held credit when no earlier reversal owes", () => {
    expect(outUnclaimed(held, [])).toBe(5);
  });

  it("lets an earlier reversal claim only jobs reserved before it", () => {
    // Owes 4, but only the 2 credits reserved at 10 were out before it: the 3 reserved at 30 are free.
    expect(outUnclaimed(held, [{ at: 20, left: 4 }])).toBe(3);
  });

  it("claims nothing for a reversal whose jobs were all delivered", () => {
    expect(outUnclaimed([{ at: 30, amount: 1 }], [{ at: 20, left: 1 }])).toBe(1);
  });

  it("never lets two reversals claim the same credit, oldest first", () => {
    expect(
      outUnclaimed(held, [
        { at: 40, left: 2 },
        { at: 20, left: 2 },
      ]),
    ).toBe(1);
    expect(
      outUnclaimed(held, [
        { at: 40, left: 9 },
        { at: 20, left: 1 },
      ]),
    ).toBe(0);
  });
});
