import { describe, expect, it } from "vitest";
// biome-ignore lint/style/noRestrictedImports: the bench has no alias; its budget rules are plain functions.
import { applyRatios, mergeRuns } from "../../bench/module";
// biome-ignore lint/style/noRestrictedImports: as above.
import { BUDGETS, type Figure, judge, renderMarkdown } from "../../bench/report";

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
});
