import {
  applyReviews,
  manifestLine,
  parseManifest,
  parseReviews,
  reviewedLabel,
  ruledOn,
} from "@test/fixtures/structure-real/pairs";
import MANIFEST from "@test/fixtures/structure-real/pairs.jsonl?raw";
import REVIEWS from "@test/fixtures/structure-real/reviews.jsonl?raw";
import { countsInFigures } from "@test/real-pairs/evaluate";
import { describe, expect, it } from "vitest";

// The real pairs' blind review (test/fixtures/structure-real/README.md, ADR 0331): a second look at every counted
// pair by someone who saw neither its label nor any score, a third where the second disagreed; the label two looks
// give is the pair's.

describe("reviewedLabel", () => {
  it("keeps the first label when the second look agrees or there is none", () => {
    expect(reviewedLabel("kept")).toBe("kept");
    expect(reviewedLabel("kept", "kept")).toBe("kept");
    expect(reviewedLabel("changed", "changed", "kept")).toBe("changed");
  });

  it("takes the label two of three looks give, else unsure", () => {
    expect(reviewedLabel("kept", "changed", "changed")).toBe("changed");
    expect(reviewedLabel("kept", "changed", "kept")).toBe("kept");
    expect(reviewedLabel("kept", "unsure", "kept")).toBe("kept");
    expect(reviewedLabel("kept", "unsure", "changed")).toBe("unsure");
    expect(reviewedLabel("kept", "changed")).toBe("unsure");
    expect(reviewedLabel("changed", "unsure", "unsure")).toBe("unsure");
  });

  it("takes a ruling's label for a pair the looks leave unsure, and only for such a pair (ADR 0335)", () => {
    expect(reviewedLabel("kept", "unsure", "unsure", "changed")).toBe("changed");
    expect(reviewedLabel("kept", "changed", "unsure", "kept")).toBe("kept");
    expect(reviewedLabel("kept", "unsure", "unsure", "unsure")).toBe("unsure");
    expect(reviewedLabel("kept", "kept", undefined, "changed")).toBe("kept");
    expect(reviewedLabel("kept", "changed", "changed", "kept")).toBe("changed");
    expect(ruledOn("kept", "unsure", "unsure")).toBe(true);
    expect(ruledOn("kept", "changed", "changed")).toBe(false);
  });
});

describe("the manifest after the review", () => {
  const pairs = parseManifest(MANIFEST as string);
  const reviews = parseReviews(REVIEWS as string);

  it("has a second look at every counted pair, and a third wherever the second disagreed", () => {
    const ids = new Set(pairs.map((p) => p.id));
    expect(reviews.filter((r) => !ids.has(r.id)).map((r) => r.id)).toEqual([]);
    const second = new Map(reviews.filter((r) => r.look === "second").map((r) => [r.id, r.label]));
    const third = new Set(reviews.filter((r) => r.look === "third").map((r) => r.id));
    const unlooked = pairs.filter((p) => countsInFigures(p) && !second.has(p.id)).map((p) => p.id);
    expect(unlooked).toEqual([]);
    const ruled = reviews.filter((r) => r.look === "ruling").map((r) => r.id);
    const decidedByLooks = pairs.filter((p) => {
      const label = (l: string) => reviews.find((r) => r.id === p.id && r.look === l)?.label;
      return ruled.includes(p.id) && !ruledOn(p.firstClass ?? p.class, label("second"), label("third"));
    });
    expect(decidedByLooks.map((p) => p.id)).toEqual([]);
    const undecided = pairs.filter(
      (p) => second.has(p.id) && second.get(p.id) !== (p.firstClass ?? p.class) && !third.has(p.id),
    );
    expect(undecided.map((p) => p.id)).toEqual([]);
  });

  it("labels every pair as its looks decide: applying them again changes no line", () => {
    const applied = applyReviews(pairs, reviews);
    const moved = pairs.filter((p, i) => manifestLine(p) !== manifestLine(applied[i]));
    expect(moved.map((p) => p.id)).toEqual([]);
  });

  it("keeps the first label beside a relabelled pair, and tags a pair no two looks agree on", () => {
    const kept = { ...pairs[0]!, id: "x", class: "kept" as const, hard: undefined, firstClass: undefined };
    const look = (look: "second" | "third", label: "kept" | "changed" | "unsure") => ({
      id: "x",
      look,
      label,
      why: ".",
    });
    const [relabelled] = applyReviews([kept], [look("second", "changed"), look("third", "changed")]);
    expect([relabelled!.class, relabelled!.firstClass]).toEqual(["changed", "kept"]);
    const [unsure] = applyReviews([kept], [look("second", "changed"), look("third", "unsure")]);
    expect([unsure!.class, unsure!.firstClass, unsure!.hard]).toEqual(["kept", undefined, ["unsure-on-review"]]);
    const ruling = { id: "x", look: "ruling" as const, label: "changed" as const, why: "." };
    const [ruled] = applyReviews([unsure!], [look("second", "changed"), look("third", "unsure"), ruling]);
    expect([ruled!.class, ruled!.firstClass, ruled!.hard]).toEqual(["changed", "kept", ["ruled"]]);
    // Applied again with the first label restored, the looks give the same answer.
    const [again] = applyReviews([relabelled!], [look("second", "changed"), look("third", "changed")]);
    expect(manifestLine(again)).toBe(manifestLine(relabelled));
  });
});
