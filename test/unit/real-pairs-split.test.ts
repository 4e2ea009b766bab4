import { parseManifest } from "@test/fixtures/structure-real/pairs";
import MANIFEST from "@test/fixtures/structure-real/pairs.jsonl?raw";
import { afterRule, RULE_FIXED, type ScoredPair, splitByGroup } from "@test/real-pairs/evaluate";
import PINNED from "@test/real-pairs/halves.json";
import { describe, expect, it } from "vitest";

// The real pairs' split by group (issue 43): groups recorded in halves.json keep their half when pairs are added, so
// a method chosen on the calibration part never meets its held-out pairs; new groups balance the halves.

const row = (group: string, kind: "stage" | "sky", cls: "kept" | "changed", photo: string) => ({
  group,
  kind,
  class: cls,
  sourcePhoto: `${group}:${photo}`,
});

describe("splitByGroup", () => {
  it("keeps pinned groups in their half whatever is added, and balances the new ones", () => {
    const pinned = { big: "heldOut", small: "calibration" };
    const rows = [
      ...["a", "b", "c", "d"].map((p) => row("big", "stage", "kept", p)),
      row("small", "stage", "kept", "a"),
      row("small", "stage", "changed", "b"),
    ];
    expect(splitByGroup(rows, pinned)).toEqual(
      new Map([
        ["big", "heldOut"],
        ["small", "calibration"],
      ]),
    );
    // Without pins the largest group would go to calibration first.
    expect(splitByGroup(rows, {}).get("big")).toBe("calibration");
    // A new group bringing kept staging goes where kept staging is scarcer: calibration (1 photo) over held-out (4).
    const more = [...rows, row("new", "stage", "kept", "x"), row("new", "stage", "kept", "y")];
    const split = splitByGroup(more, pinned);
    expect([split.get("big"), split.get("small"), split.get("new")]).toEqual(["heldOut", "calibration", "calibration"]);
  });

  it("pins every group of the recorded set to a half", () => {
    const halves = Object.values(PINNED as Record<string, string>);
    expect(halves.length).toBeGreaterThan(30);
    expect(new Set(halves)).toEqual(new Set(["calibration", "heldOut"]));
  });
});

describe("afterRule", () => {
  const scored = (id: string, cls: "kept" | "changed", verdict: string, added?: string, hard = false): ScoredPair => ({
    id,
    kind: "stage",
    class: cls,
    group: `g-${id}`,
    sourcePhoto: `g-${id}:photo`,
    unsure: hard,
    score: verdict === "passed" ? 0.5 : 1.5,
    verdict,
    scoreArea: 0,
    values: {},
    valuesArea: {},
    ...(added ? { added } : {}),
  });

  it("counts only the pairs added after the kind's rule was fixed, from both halves, and none without a date", () => {
    const fixed = Date.parse(RULE_FIXED.stage.at);
    const before = new Date(fixed - 1000).toISOString();
    const after = new Date(fixed + 1000).toISOString();
    const rows = [
      scored("a", "kept", "flagged", after),
      scored("b", "kept", "passed", after),
      scored("c", "kept", "flagged", before),
      scored("d", "changed", "passed", after),
      scored("e", "changed", "flagged", after),
      scored("f", "changed", "passed"),
      scored("g", "kept", "flagged", after, true),
    ];
    const r = afterRule(rows, "stage");
    expect(r.pairs).toBe(4);
    expect([r.keptMarked.k, r.keptMarked.n, r.changedPassed.k, r.changedPassed.n]).toEqual([1, 2, 1, 2]);
    expect(r.keptMarked.sources).toBe(2);
    expect(afterRule(rows, "sky").pairs).toBe(0);
  });

  it("dates every pair of the manifest, and removal's rule before the first of them", () => {
    const pairs = parseManifest(MANIFEST as string);
    const undated = pairs.filter((p) => !p.added || Number.isNaN(Date.parse(p.added)));
    expect(undated.map((p) => p.id)).toEqual([]);
    const first = Math.min(...pairs.map((p) => Date.parse(p.added!)));
    expect(Date.parse(RULE_FIXED.removal.at)).toBeLessThan(first);
  });
});
