import { expect, test } from "vitest";
import { turnOrder } from "../../bench/compare.ts";

// ADR 0334: a comparison alternates which side goes first, round by round, so a fixed order cannot bias its ratios.

test("the revision goes first in rounds 1 and 3, the working tree in round 2", () => {
  const sides = ["revision", "working tree"];
  expect([0, 1, 2].map((round) => turnOrder(sides, round, 0)[0])).toEqual(["revision", "working tree", "revision"]);
});

test("a sampled module's calls alternate ABBA from the round's first side, each side first equally often", () => {
  const sides = ["A", "B"];
  const round = (r: number) => [0, 1, 2, 3].flatMap((sample) => turnOrder(sides, r, sample)).join("");
  expect(round(0)).toBe("ABBAABBA");
  expect(round(1)).toBe("BAABBAAB");
  const firsts = [0, 1, 2, 3].flatMap((r) => [0, 1].map((s) => turnOrder(sides, r, s)[0]));
  expect(firsts.filter((f) => f === "A")).toHaveLength(firsts.length / 2);
  expect(sides).toEqual(["A", "B"]);
});
