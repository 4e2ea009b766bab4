import { describe, expect, it } from "vitest";
// biome-ignore lint/style/noRestrictedImports: as above.
import { compareFigures, ratioText, renderComparison } from "../../bench/compared";
// biome-ignore lint/style/noRestrictedImports: as above.
import { splitFigures, splitJob } from "../../bench/job-split";
// biome-ignore lint/style/noRestrictedImports: the bench has no alias; its budget rules are plain functions.
import { applyRatios, mergeRuns, mergeSamples } from "../../bench/module";
// biome-ignore lint/style/noRestrictedImports: as above.
import { whyOver } from "../../bench/over-budget";
// biome-ignore lint/style/noRestrictedImports: as above.
import { BUDGETS, type Figure, judge, overBudgetSection, renderMarkdown, VS_BASELINE } from "../../bench/report";
// biome-ignore lint/style/noRestrictedImports: as above.
import COMMITTED from "../../bench/results/report.json";

// The bench judges timed figures as ratios to the bare React Router page of the same run (issue 17): a ratio
// budget can hold a figure at most (a page's p50) or at least (`/`'s requests/s) that many times the bare page.
function figure(extra: Partial<Figure>): Figure {
  return { group: "SSR", name: "x", value: 1, unit: "req/s", ...extra };
}

describe("bench budgets", () => {
  it("holds / to at least 3x its 2026-11-21 ratio to the bare page (0.65x, so 1.95x)", () => {
    const rule = BUDGETS.rps("/");
    expect(rule).toEqual({ ratioBudget: 1.95, ratioOp: ">=" });
    expect(judge(figure({ ...rule, ratio: 2.05 })).pass).toBe(true);
    expect(judge(figure({ ...rule, ratio: 1.95 })).pass).toBe(true);
    expect(judge(figure({ ...rule, ratio: 1.71 })).pass).toBe(false);
  });

  it("keeps an at-most ratio budget (the dashboard's p50) and plain budgets as they were", () => {
    expect(judge(figure({ ratioBudget: BUDGETS.dashboardRatio, ratio: 1.54 })).pass).toBe(true);
    expect(judge(figure({ ratioBudget: BUDGETS.dashboardRatio, ratio: 1.7 })).pass).toBe(false);
    expect(judge(figure({ ...BUDGETS.rps("/dashboard"), value: 155 })).pass).toBe(true);
    expect(judge(figure({ ...BUDGETS.rps("/dashboard"), value: 99 })).pass).toBe(false);
    expect(BUDGETS.rps("baseline: bare React Router page")).toEqual({});
  });

  it("states the local stack's conditions at the start: the state folder's sync time and the trace store", () => {
    const report = { generatedAt: "2026-11-24T00:00:00Z", durationSeconds: 1, machine: "2 cores", figures: [] };
    const without = renderMarkdown(report);
    expect(without).not.toContain("Local storage at the start");
    const on = renderMarkdown({ ...report, stackAtStart: { syncMs: { p50: 0.21, p90: 0.25 }, traceStore: "on" } });
    expect(on).toContain("a 4 KB append + fsync in the state folder took 0.21 ms (p50), 0.25 ms (p90)");
    expect(on).toContain("wrangler's local trace store was on (its default)");
    const off = renderMarkdown({ ...report, stackAtStart: { syncMs: { p50: 0.2, p90: 0.3 }, traceStore: "off" } });
    expect(off).toContain("wrangler's local trace store was off.");
  });

  it("judges a ratio on the median of the runs' paired ratios, with their spread, not on the medians' ratio", () => {
    const bare = (value: number): Figure => figure({ name: "bare p50", value, unit: "ms" });
    const page = (value: number, pairedRatio?: number): Figure =>
      figure({
        name: "/dashboard p50",
        value,
        unit: "ms",
        relativeTo: { name: "bare p50", label: "the bare page" },
        ratioBudget: BUDGETS.dashboardRatio,
        ...(pairedRatio === undefined ? {} : { pairedRatio }),
      });
    // Each run's page beside its own bare turns: 1.5x, 1.55x, 1.7x. The medians alone (28 over 15) say 1.87x.
    const paired = applyRatios(
      mergeRuns([
        [bare(15), page(24, 1.5)],
        [bare(22), page(28, 1.55)],
        [bare(18), page(31, 1.7)],
      ]),
    ).map(judge);
    const dashboard = paired.find((f) => f.name === "/dashboard p50")!;
    expect(dashboard.ratioSamples).toEqual([1.5, 1.55, 1.7]);
    expect(dashboard.ratio).toBe(1.55);
    expect(dashboard.pass).toBe(true);
    expect(dashboard.baseline).toBe("1.55x the bare page beside it, 1.50–1.70x over the runs");
    expect(dashboard).not.toHaveProperty("pairedRatio");
    // A run without its paired ratio: the whole figure falls back to the medians' ratio (28 / 18).
    const unpaired = applyRatios(
      mergeRuns([
        [bare(15), page(24, 1.5)],
        [bare(22), page(28)],
        [bare(18), page(31, 1.7)],
      ]),
    ).map(judge);
    const fallback = unpaired.find((f) => f.name === "/dashboard p50")!;
    expect(fallback.ratioSamples).toBeUndefined();
    expect(fallback.ratio).toBe(1.56);
    expect(fallback.baseline).toBe("1.56x the bare page");
  });

  it("makes a sampled run's calls one run: each figure their median, its paired ratio too, no spread of its own", () => {
    const rate = (value: number, pairedRatio?: number): Figure =>
      figure({ group: "Credits", name: "reservations/s, 1 user", value, unit: "res/s", nonZero: true, pairedRatio });
    // One call met the disk's slow swing (900): the run's figure is the median of five calls, not their mean (1600).
    const run = mergeSamples([
      [rate(1800, 1.2)],
      [rate(900, 0.6)],
      [rate(1750, 1.1)],
      [rate(1820, 1.3)],
      [rate(1730, 1)],
    ]);
    expect(run).toEqual([rate(1750, 1.1)]);
    // Rounds of such runs merge as any runs do: the spread is the rounds', not the calls'.
    const rounds = mergeRuns([run, mergeSamples([[rate(1600)], [rate(1700)], [rate(1650)]])]);
    expect(rounds[0]).toMatchObject({ value: 1700, min: 1650, max: 1750, runs: 2, samples: [1750, 1650] });
  });
});

// Issue 44: a figure that is no measurement fails the run; budgets on the job's path are ratios (to the batch's
// floor, or to a baseline revision measured in turns beside the working tree); a job's time is split into parts.
describe("bench figures that are no measurement", () => {
  it("refuses a NaN value or spread, and a zero count of work done, but not a zero where none is promised", () => {
    const nan = judge(figure({ name: "fetch p50", value: Number.NaN, unit: "ms" }));
    expect(nan.invalid).toBe("not a number (NaN or infinite)");
    expect(nan.pass).toBe(false);
    const merged = mergeRuns([[figure({ name: "calls", value: 0, unit: "calls", nonZero: true })]]).map(judge);
    expect(merged[0]!.invalid).toBe("a zero count where work was done");
    const oneRunZero = mergeRuns([
      [figure({ name: "calls", value: 2, nonZero: true })],
      [figure({ name: "calls", value: 0, nonZero: true })],
      [figure({ name: "calls", value: 2, nonZero: true })],
    ]).map(judge);
    expect(oneRunZero[0]!.value).toBe(2);
    expect(oneRunZero[0]!.invalid).toBe("a zero count where work was done");
    // `/` ships no JavaScript at all: 0 KB is its measurement.
    expect(judge(figure({ name: "/ gzipped JS", value: 0, unit: "KB", ...BUDGETS.js("/") })).invalid).toBeUndefined();
    const md = renderMarkdown({ generatedAt: "x", durationSeconds: 1, machine: "2 cores", figures: [nan] });
    expect(md).toContain("**1 figure(s) are no measurement**");
    expect(md).toContain("**invalid: not a number (NaN or infinite)**");
  });
});

describe("bench budgets as ratios", () => {
  it("holds the batch's wall time to 1.15x its floor, judged on the runs' own ratios", () => {
    const floor: Figure = figure({ name: "floor", value: 20, unit: "s" });
    const wall = (value: number): Figure =>
      figure({
        name: "wall",
        value,
        unit: "s",
        relativeTo: { name: "floor", label: "the floor" },
        ratioBudget: BUDGETS.batchFloorRatio,
        pairedRatio: value / 20,
      });
    const slow = applyRatios(
      mergeRuns([
        [floor, wall(33.5)],
        [floor, wall(31)],
        [floor, wall(34)],
      ]),
    ).map(judge);
    expect(slow.find((f) => f.name === "wall")!.ratio).toBe(1.68);
    expect(slow.find((f) => f.name === "wall")!.pass).toBe(false);
    const quick = applyRatios(
      mergeRuns([
        [floor, wall(21.9)],
        [floor, wall(22.5)],
        [floor, wall(22)],
      ]),
    ).map(judge);
    expect(quick.find((f) => f.name === "wall")!.pass).toBe(true);
  });

  it("gives reservations no absolute budget: they are judged against the baseline revision", () => {
    expect(BUDGETS.reservations(1)).toEqual({});
    expect(VS_BASELINE["reservations/s, 1 user"]).toEqual({ op: ">=", ratio: 0.95 });
    expect(VS_BASELINE["wall time until every photo settled"]).toEqual({ op: "<=", ratio: 1.05 });
    expect(BUDGETS.overheadP50).toEqual({ budget: 60, op: "<=" });
  });

  it("pairs the two sides' figures, with the medians' ratio, the rounds' ratios and the baseline rule", () => {
    const side = (values: number[], name: string) =>
      mergeRuns(values.map((value) => [figure({ group: "Credits", name, value, unit: "res/s" })])).map(judge);
    const rows = compareFigures(
      [...side([1795, 1700, 1800], "reservations/s, 1 user"), ...side([10], "only in the revision")],
      side([1457, 1500, 1400], "reservations/s, 1 user"),
    );
    const res = rows.find((r) => r.name === "reservations/s, 1 user")!;
    expect(res.ratio).toBe(0.812);
    expect(res.roundRatios!.map((r) => Math.round(r * 100) / 100)).toEqual([0.81, 0.88, 0.78]);
    expect(res.pass).toBe(false);
    expect(ratioText(res)).toBe("0.81x (rounds 0.78–0.88x)");
    const lone = rows.find((r) => r.name === "only in the revision")!;
    expect(lone.ratio).toBeUndefined();
    expect(lone.pass).toBeUndefined();
    const md = renderComparison({
      generatedAt: "t",
      durationSeconds: 1,
      against: { asked: "5232848", sha: "52328482c356", subject: "s" },
      workingTree: "working tree (abc)",
      modules: ["credits"],
      rounds: 3,
      cores: 2,
      turns: [
        { side: "5232848 (5232848)", module: "credits", round: 0, loadStart: 5.1, loadEnd: 6.2, seconds: 3 },
        { side: "working tree (abc)", module: "credits", round: 0, loadStart: 6.2, loadEnd: 7, seconds: 3 },
      ],
      rows,
    });
    expect(md).toContain("5232848: 5.1→6.2; working tree: 6.2→7.0");
    expect(md).toContain("| reservations/s, 1 user | 1795 res/s [1700–1800] | 1457 res/s [1400–1500] | 0.81x");
    expect(md).toContain(">= 0.95x: **over**");
  });
});

describe("where a job's time goes", () => {
  const job = (spans: { part: string; start: number; end: number; calls?: number; afterEnd?: boolean }[]) => ({
    jobId: "j",
    startedAt: 0,
    endedAt: 1000,
    spans: spans.map((s) => ({ calls: 1, ...s })),
  });

  it("takes the provider's own time from its log, its fetch of our address out, and the rest as what no part covers", () => {
    const split = splitJob(
      job([
        { part: "d1Write", start: 10, end: 30 },
        { part: "providerCall", start: 40, end: 640 },
        { part: "r2Write", start: 650, end: 700 },
        { part: "checkQueue", start: 700, end: 720 },
        { part: "checkWorker", start: 720, end: 730 },
        { part: "images", start: 730, end: 800, calls: 2 },
        { part: "checkWorker", start: 800, end: 810 },
        { part: "checkAnswer", start: 810, end: 820 },
        { part: "d1Write", start: 830, end: 900 },
        { part: "images", start: 1200, end: 1300, calls: 1, afterEnd: true },
      ]),
      [
        { at: 50, ms: 580, input_fetch_at: 300, input_fetch_ms: 30, input_image_url: "https://x/photos/p1/a" },
        { at: 60, ms: 10, input_image_url: "https://x/photos/other/a" },
      ],
      [0, 1000],
      "p1",
    );
    expect(split.parts.provider).toBe(550);
    expect(split.parts.images).toBe(70);
    expect(split.parts.checkWorker).toBe(20);
    expect(split.parts.d1Write).toBe(90);
    expect(split.parts.rest).toBe(1000 - (550 + 70 + 20 + 20 + 10 + 50 + 90));
    expect(split.restInCallsMs).toBe(600 - 550);
    expect(split.imagesCalls).toBe(2);
    expect(split.imagesCallsAfter).toBe(1);
    expect(split.imagesCallsAhead).toBe(0);
    expect(split.overlapMs).toBe(0);
  });

  it("carries the calls made beside the provider call (the source, ADR 0322) apart from those on the path", () => {
    const recorded = { ...job([{ part: "images", start: 700, end: 740, calls: 1 }]), imagesAhead: 1 };
    const split = splitJob(recorded, [], [0, 1000]);
    expect([split.imagesCalls, split.imagesCallsAhead, split.imagesCallsAfter]).toEqual([1, 1, 0]);
  });

  it("tells the rest before the object's run and after its commit from the rest inside it", () => {
    const recorded = job([
      { part: "d1Write", start: 0, end: 20 },
      { part: "providerCall", start: 20, end: 900 },
      { part: "d1Write", start: 950, end: 1000 },
    ]);
    // The bench's window: its start request 40 ms before the run, the long poll's answer 25 ms after the commit.
    const split = splitJob(recorded, [], [-40, 1025]);
    expect([split.restBeforeRunMs, split.restAfterRunMs]).toEqual([40, 25]);
    expect(split.parts.rest).toBe(1065 - 20 - 50);
    // Inside the run's own window nothing lies outside it.
    const inside = splitJob(recorded, [], [0, 1000]);
    expect([inside.restBeforeRunMs, inside.restAfterRunMs]).toEqual([0, 0]);
    // Reported only where the window reaches beyond the run (staging), not where it is the run (the batch).
    const named = (beyond: boolean) =>
      splitFigures("g", [split], "per job", beyond).filter((f) => / (before|after) the object's /.test(f.name));
    expect(named(true).map((f) => f.value)).toEqual([40, 25]);
    expect(named(false)).toEqual([]);
  });

  it("says when two parts cover the same time (the sum is then over the wall time)", () => {
    const split = splitJob(
      job([
        { part: "r2Write", start: 100, end: 300 },
        { part: "d1Write", start: 200, end: 400 },
      ]),
      [],
      [0, 1000],
    );
    expect(split.overlapMs).toBe(100);
    const figures = splitFigures("g", [split]);
    const addsUp = figures.find((f) => f.name.includes("add up"))!;
    expect(judge(addsUp).pass).toBe(false);
    expect(addsUp.value).toBe(10);
    expect(figures.find((f) => f.name.includes("image service calls"))!.nonZero).toBe(true);
  });

  it("says under the tables why each over-budget figure is over, and in bold where no reason is written", () => {
    const why = { "/dashboard": "any /dashboard figure.", "/dashboard, 60 photos p50": "the 24 cards' markup." };
    expect(whyOver("/dashboard, 60 photos p50", why)).toBe("the 24 cards' markup.");
    expect(whyOver("/dashboard p50", why)).toBe("any /dashboard figure.");
    expect(whyOver("/ requests/s", why)).toBeUndefined();
    const over = judge(figure({ name: "/dashboard, 60 photos p50", value: 90, unit: "ms", budget: 80, op: "<=" }));
    const bare = judge(figure({ name: "/ requests/s", value: 400, budget: 500, op: ">=" }));
    const within = judge(figure({ name: "/dashboard p50", value: 10, unit: "ms", budget: 80, op: "<=" }));
    expect(overBudgetSection([within], why)).toEqual([]);
    const explained = overBudgetSection([over, within], why).join("\n");
    expect(explained).toContain("1 figure(s) over budget; each has a reason");
    expect(explained).toContain("- SSR: /dashboard, 60 photos p50 = 90 ms (budget <= 80 ms). the 24 cards' markup.");
    expect(explained).not.toContain("/dashboard p50");
    const report = { generatedAt: "2026-11-29T00:00:00Z", durationSeconds: 1, machine: "2 cores" };
    const md = renderMarkdown({ ...report, figures: [over, bare] }, why);
    expect(md).toContain("2 figure(s) over budget; **1 without** a reason");
    expect(md).toContain("- SSR: / requests/s = 400 req/s (budget >= 500 req/s). **no reason written**");
  });

  it("the committed report (bench/results/report.json) has no figure that is no measurement, and a reason for each over", () => {
    const figures = (COMMITTED as { figures: Figure[] }).figures.map(judge);
    expect(figures.length).toBeGreaterThan(50);
    expect(figures.filter((f) => f.invalid).map((f) => `${f.name}: ${f.invalid}`)).toEqual([]);
    const over = figures.filter((f) => f.pass === false);
    expect(over.filter((f) => whyOver(f.name) === undefined).map((f) => f.name)).toEqual([]);
  });
});
