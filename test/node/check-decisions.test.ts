import { describe, expect, it } from "vitest";
import { decisionProblems, duplicateNumbers } from "../../scripts/check-decisions.ts";

// The ADR check of `npm run lint` (scripts/check-decisions.ts, issue 48): an undated ADR, one without a status and two
// ADRs under one number are caught; a dated ADR with a status, in either of the forms the folder uses, is not.

describe("the decisions check", () => {
  it("passes a dated ADR with a status, on one line or two", () => {
    expect(decisionProblems("0001-a.md", "# 0001 A\n\nDate: 2026-11-21. Status: Accepted.\n\n## Context\n")).toEqual(
      [],
    );
    expect(decisionProblems("0002-b.md", "# 0002 B\n\nDate: 2026-11-28\nStatus: Superseded by 0003\n")).toEqual([]);
  });

  it("catches an ADR without a date, without a status, or without its number in the title", () => {
    expect(decisionProblems("0004-c.md", "# 0004 C\n\nStatus: Accepted.\n\n## Context\n")).toEqual([
      "0004-c.md: no date (YYYY-MM-DD) in its first lines",
    ]);
    expect(decisionProblems("0005-d.md", "# 0005 D\n\nDate: 2026-11-21.\n")).toEqual([
      '0005-d.md: no "Status:" in its first lines',
    ]);
    expect(decisionProblems("0006-e.md", "# E\n\nDate: 2026-11-21. Status: Accepted.\n")).toHaveLength(1);
  });

  it("catches two ADRs under one number", () => {
    expect(duplicateNumbers(["0315-a.md", "0316-b.md", "0316-c.md"])).toEqual([
      "0316-c.md: number 0316 is also 0316-b.md",
    ]);
    expect(duplicateNumbers(["0315-a.md", "0316-b.md"])).toEqual([]);
  });
});
