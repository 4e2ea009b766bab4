import { limitsFor } from "@workers/checker/judge";
import { type ChangeMap, changePlaces } from "@workers/lib/structure/change-map";
import { fromWire, isWireLimits, outcomeOf, STRUCTURE_LIMITS, toWire } from "@workers/lib/structure/verdict";
import { describe, expect, it } from "vitest";
import {
  FREE_REFUSALS_PER_DAY,
  flaggedMessage,
  mlsRefusal,
  RETURNED_NOT_FOR_MLS,
  type StructureVerdict,
} from "~/shared/version-view";

// The structure check's three outcomes (docs/decisions/0215-flag-when-unsure.md): a score becomes passed, flagged or
// refused by its kind's limits in one place (workers/lib/structure/verdict.ts), whatever the measures become.

describe("outcomeOf", () => {
  it("passes at or under mark, flags above it, refuses only above refuse", () => {
    const limits = { mark: 1, refuse: 3 };
    expect([0, 1, 1.01, 3, 3.01].map((s) => outcomeOf(s, limits))).toEqual([
      "passed",
      "passed",
      "flagged",
      "flagged",
      "refused",
    ]);
  });

  it("a kind whose refuse is Infinity never refuses; mark equal to refuse is the old two-outcome rule", () => {
    expect(outcomeOf(1e9, { mark: 1, refuse: Number.POSITIVE_INFINITY })).toBe("flagged");
    expect([0.5, 1.5].map((s) => outcomeOf(s, { mark: 1, refuse: 1 }))).toEqual(["passed", "refused"]);
  });

  it("in production no kind refuses, and every score over the old threshold of 1 flags", () => {
    for (const kind of ["stage", "removal", "sky"] as const) {
      expect(STRUCTURE_LIMITS[kind]).toEqual({ mark: 1, refuse: Number.POSITIVE_INFINITY });
      expect(outcomeOf(50, STRUCTURE_LIMITS[kind])).toBe("flagged");
    }
  });
});

describe("limits on the queue", () => {
  it("carry Infinity as null and back", () => {
    expect(toWire({ mark: 1, refuse: Number.POSITIVE_INFINITY })).toEqual({ mark: 1, refuse: null });
    expect(fromWire({ mark: 1, refuse: null })).toEqual({ mark: 1, refuse: Number.POSITIVE_INFINITY });
    expect(isWireLimits({ mark: 1, refuse: 2 })).toBe(true);
    for (const bad of [null, { mark: 2, refuse: 1 }, { mark: -1, refuse: null }, { mark: "1", refuse: null }, {}]) {
      expect(isWireLimits(bad)).toBe(false);
    }
  });

  it("a check Worker honours a request's limits in tests and development only", () => {
    const req = { kind: "stage" as const, limits: { mark: 1, refuse: 1 } };
    expect(limitsFor({ APP_ENV: "test" }, req)).toEqual({ mark: 1, refuse: 1 });
    expect(limitsFor({ APP_ENV: "development" }, req)).toEqual({ mark: 1, refuse: 1 });
    expect(limitsFor({ APP_ENV: "production" }, req)).toEqual(STRUCTURE_LIMITS.stage);
    expect(limitsFor({ APP_ENV: "test" }, { kind: "sky" })).toEqual(STRUCTURE_LIMITS.sky);
    expect(limitsFor({ APP_ENV: "test" }, { kind: "sky", limits: { mark: 3, refuse: 1 } })).toEqual(
      STRUCTURE_LIMITS.sky,
    );
  });
});

describe("where the check saw the change", () => {
  /** A 320 x 240 change map with a block of `value` at (x, y), w x h. */
  function mapWith(blocks: { x: number; y: number; w: number; h: number; value: number }[]): ChangeMap {
    const data = new Uint8Array(320 * 240);
    for (const b of blocks)
      for (let y = b.y; y < b.y + b.h; y++) for (let x = b.x; x < b.x + b.w; x++) data[y * 320 + x] = b.value;
    return { width: 320, height: 240, data };
  }

  it("names the places holding a fifth or more of the changes, most changed first, by third across and half down", () => {
    const map = mapWith([
      { x: 20, y: 20, w: 40, h: 30, value: 255 },
      { x: 250, y: 180, w: 10, h: 10, value: 255 },
    ]);
    expect(changePlaces(map)).toEqual(["upper left"]);
    expect(changePlaces(mapWith([{ x: 150, y: 200, w: 20, h: 20, value: 128 }]))).toEqual(["lower centre"]);
    const two = mapWith([
      { x: 10, y: 10, w: 30, h: 30, value: 255 },
      { x: 250, y: 150, w: 20, h: 20, value: 255 },
    ]);
    expect(changePlaces(two)).toEqual(["upper left", "lower right"]);
  });

  it("says nothing when the map is empty", () => {
    expect(changePlaces(mapWith([]))).toEqual([]);
  });
});

describe("the messages and the MLS rule", () => {
  it("a flagged result says what to check, where, and why it was delivered when the day's refusals were spent", () => {
    expect(flaggedMessage(["upper left"], "score")).toMatch(/^Check the walls and windows: .*upper left/);
    expect(flaggedMessage(["upper left", "lower right"], "score")).toContain("upper left and lower right");
    const spent = flaggedMessage([], "daily_limit");
    expect(spent).toContain(`${FREE_REFUSALS_PER_DAY} of your results were already refused today`);
    expect(spent).toContain("charged");
  });

  it("a flagged result goes into a listing only once confirmed; refused, kept and returned never", () => {
    const rule = (verdict: StructureVerdict | null, confirmedAt: number | null, returnedAt: number | null = null) =>
      mlsRefusal({ verdict, confirmedAt, returnedAt });
    expect(rule("flagged", null)).toContain("I checked the walls and windows");
    expect(rule("flagged", 1)).toBeNull();
    expect(rule("refused", 1)).not.toBeNull();
    expect(rule("kept", 1)).not.toBeNull();
    expect(rule("passed", null)).toBeNull();
    expect(rule(null, null)).toBeNull();
    // Returned: refused before anything else, so a flagged one is not offered the confirmation.
    expect(rule("passed", null, 1)).toBe(RETURNED_NOT_FOR_MLS);
    expect(rule("flagged", null, 1)).toBe(RETURNED_NOT_FOR_MLS);
    expect(rule("flagged", 1, 1)).toBe(RETURNED_NOT_FOR_MLS);
  });
});
