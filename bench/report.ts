export interface Figure {
  group: string;
  name: string;
  value: number;
  unit: string;
  budget?: number;
  op?: "<=" | ">=";
  pass?: boolean;
  baseline?: string;
}

type Budget = Pick<Figure, "budget" | "op" | "pass"> & { check?: never };

function budget(op: "<=" | ">=", value: number): { budget: number; op: "<=" | ">=" } {
  return { budget: value, op };
}

/** The budgets every figure is held to (docs/performance.md explains them). */
export const BUDGETS = {
  rps: (label: string): Budget => (label.startsWith("baseline") ? {} : budget(">=", 100)),
  p50: (label: string): Budget => (label.startsWith("baseline") ? {} : budget("<=", 50)),
  p99: (label: string): Budget => (label.startsWith("baseline") ? {} : budget("<=", 250)),
  reservations: (users: number): Budget => budget(">=", users === 1 ? 100 : 300),
  js: budget("<=", 130),
  lighthouse: budget(">=", 95),
  lcp: budget("<=", 2),
  uploadMb: budget("<=", 3),
  overheadP50: budget("<=", 250),
  overheadP99: budget("<=", 600),
  gridKb: budget("<=", 1500),
  // The public API's extra work per job creation (key, rate limit, idempotency): docs/performance.md.
  apiOverheadP50: budget("<=", 25),
  apiOverheadP99: budget("<=", 100),
};

export function judge(f: Figure): Figure {
  if (f.budget === undefined || !f.op) return f;
  return { ...f, pass: f.op === "<=" ? f.value <= f.budget : f.value >= f.budget };
}

export function renderMarkdown(report: {
  generatedAt: string;
  durationSeconds: number;
  machine: string;
  figures: Figure[];
}): string {
  const figures = report.figures.map(judge);
  const groups = [...new Set(figures.map((f) => f.group))];
  const lines = [
    "# Benchmark report",
    "",
    `Generated ${report.generatedAt} by \`npm run bench\` in ${report.durationSeconds} s on ${report.machine}.`,
    "",
  ];
  for (const g of groups) {
    lines.push(`## ${g}`, "", "| figure | value | budget | |", "|---|---:|---:|---|");
    for (const f of figures.filter((x) => x.group === g)) {
      const budgetText = f.budget === undefined ? "" : `${f.op} ${f.budget} ${f.unit}`.trim();
      const mark = f.pass === undefined ? "" : f.pass ? "ok" : "**over**";
      lines.push(
        `| ${f.name} | ${f.value} ${f.unit}${f.baseline ? ` (${f.baseline})` : ""} | ${budgetText} | ${mark} |`,
      );
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
