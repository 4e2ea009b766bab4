import { describe, expect, it } from "vitest";
import { END, headline, START, withHeadline } from "../../bench/headline.ts";
import type { Figure } from "../../bench/report.ts";

// Issue 44: docs/performance.md's headline table is written from the bench's reports (bench/headline.ts), so it
// cannot say more than a run measured: a figure a report lacks reads "not measured", an invalid one is named.

const fig = (name: string, value: number, extra: Partial<Figure> = {}): Figure => ({
  group: "g",
  name,
  value,
  unit: "ms",
  samples: [value],
  ...extra,
});

const against = {
  generatedAt: "2026-11-28T19:55:00.000Z",
  against: { asked: "5232848", sha: "52328482c356b422258844e98681ce3ae48c9e8d" },
  rounds: 3,
  turns: [{ side: "5232848", module: "batch", round: 0, loadStart: 0.4, loadEnd: 1.2, seconds: 30 }],
  rows: [
    {
      group: "g",
      name: "wall time until every photo settled",
      unit: "s",
      base: fig("wall time until every photo settled", 21.9, { unit: "s" }),
      work: fig("wall time until every photo settled", 21.5, { unit: "s", ratio: 1.08, ratioBudget: 1.15 }),
      ratio: 0.982,
      roundRatios: [0.982],
      rule: { op: "<=" as const, ratio: 1.05 },
      pass: true,
    },
  ],
};

const pages = {
  generatedAt: "2026-11-28T20:10:00.000Z",
  loadAtStart: { loadavg: [0.5, 0.6, 0.7], cores: 2 },
  figures: [
    fig("/dashboard gzipped JS", 128.6, { unit: "KB", budget: 130, op: "<=" }),
    fig("/dashboard, 60 photos p50", 0, { invalid: "a zero count where work was done" }),
  ],
};

describe("the headline table", () => {
  it("gives both sides, the ratio and the judgement; says what was not measured and what is no measurement", () => {
    const text = headline(against, pages).join("\n");
    expect(text).toContain(
      "| batch of 40 photos, 2 s a call, 4 at once: wall time | 21.9 s | 21.5 s; 1.08x the floor |",
    );
    expect(text).toContain("load 0.40-1.20");
    expect(text).toMatch(/\| staging overhead p50 [^|]*\| not measured \| not measured \|/);
    expect(text).toMatch(/\/dashboard: gzipped JS \| {2}\| 128\.6 KB \| {2}\| <= 130 KB \| within \|/);
    expect(text).toContain("**Not measurements** (NaN or a zero count of work done): /dashboard, 60 photos p50.");
    expect(text).not.toContain("undefined");
    expect(text).not.toMatch(/NaN ?(ms|s|x|KB)/);
  });

  it("goes under 'Latest figures' once, then replaces itself", () => {
    const doc = "# P\n\n## Latest figures\n\nold text\n";
    const once = withHeadline(doc, ["table one"]);
    expect(once).toBe(`# P\n\n## Latest figures\n\n${START}\ntable one\n${END}\n\nold text\n`);
    const twice = withHeadline(once, ["table two"]);
    expect(twice).toBe(`# P\n\n## Latest figures\n\n${START}\ntable two\n${END}\n\nold text\n`);
  });
});
