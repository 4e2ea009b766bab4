import { splitByGroup } from "@test/real-pairs/evaluate";
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
