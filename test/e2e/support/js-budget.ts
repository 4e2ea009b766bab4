// Apart from page-weight.ts, which needs Node and a browser: bench/report.ts, also compiled for the Worker's tests,
// reads the budget from here.

/** Issue 17: / under 90 KB of gzipped JS (a peer's prerendered / sends 88 KB); other pages 130 KB. */
export function jsBudgetKb(path: string): number {
  return path === "/" ? 90 : 130;
}
