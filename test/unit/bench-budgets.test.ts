import { describe, expect, it } from "vitest";
// biome-ignore lint/style/noRestrictedImports: the bench has no alias; its budget rules are plain functions.
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
});
