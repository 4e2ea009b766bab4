import { describe, expect, it } from "vitest";
import {
  decisionProblems,
  duplicateNumbers,
  lengthProblems,
  median,
  stands,
  wordCount,
} from "../../scripts/check-decisions.ts";

// The ADR check of `npm run lint` (scripts/check-decisions.ts, issue 48): an undated ADR, one without a status and two
// ADRs under one number are caught; a dated ADR with a status, in either of the forms the folder uses, is not. And the
// length rule (issue 48 item 4): an ADR that stands over 900 words fails, so does a median of 350 words or more.

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

  it("takes a status only from the template's closed set, and only from a Status line", () => {
    // ADR 0101 passed with no status because its context quoted a JSON shape, `{status:"invalid"}`.
    expect(decisionProblems("0010-i.md", '# 0010 I\n\nDate: 2026-11-23.\n\nanswered `{status:"invalid"}`\n')).toEqual([
      '0010-i.md: no "Status:" in its first lines',
    ]);
    expect(decisionProblems("0007-f.md", "# 0007 F\n\nDate: 2026-11-29. Status: Deprecated.\n")).toEqual([]);
    expect(decisionProblems("0008-g.md", "# 0008 G\n\nDate: 2026-11-29. Status: proposed\n")).toEqual([]);
    expect(decisionProblems("0009-h.md", "# 0009 H\n\nDate: 2026-11-29. Status: Done.\n")).toEqual([
      '0009-h.md: status "Done" is not one of proposed, accepted, superseded, deprecated (docs/decisions/0000-template.md)',
    ]);
  });

  it("catches two ADRs under one number", () => {
    expect(duplicateNumbers(["0315-a.md", "0316-b.md", "0316-c.md"])).toEqual([
      "0316-c.md: number 0316 is also 0316-b.md",
    ]);
    expect(duplicateNumbers(["0315-a.md", "0316-b.md"])).toEqual([]);
  });

  it("counts words outside HTML comments, and only ADRs that stand", () => {
    expect(wordCount("# 0001 A\n\nDate: 2026-11-21.  Status:\tAccepted.\n")).toBe(7);
    expect(wordCount("one two <!-- three\nfour five --> six")).toBe(3);
    expect(stands("# 0002 B\n\nDate: 2026-11-28\nStatus: Superseded by 0003\n")).toBe(false);
    expect(stands("# 0003 C\n\nDate: 2026-11-28. Status: superseded by [0004](0004-d.md)\n")).toBe(false);
    // Superseded in part: the rest still holds, so it still counts.
    expect(stands("# 0004 D\n\nDate: 2026-11-28. Status: Accepted; its fence superseded by 0005.\n")).toBe(true);
  });

  it("fails an ADR over 900 words and a median of 350 or more", () => {
    const planted = (n: number) => `# 0001 A\n\nDate: 2026-11-21. Status: Accepted.\n\n${"word ".repeat(n - 7)}`;
    expect(wordCount(planted(901))).toBe(901);
    const short = new Map([
      ["0001-a.md", wordCount(planted(200))],
      ["0002-b.md", wordCount(planted(300))],
      ["0003-c.md", wordCount(planted(900))],
    ]);
    expect(lengthProblems(short)).toEqual([]);
    expect(lengthProblems(new Map([...short, ["0004-d.md", wordCount(planted(901))]]))).toEqual([
      "0004-d.md: 901 words, over 900",
      "the median ADR that stands has 600 words, not under 350",
    ]);
    expect(median([100, 349, 351, 800])).toBe(350);
    expect(
      lengthProblems(
        new Map([
          ["0001-a.md", 340],
          ["0002-b.md", 360],
          ["0003-c.md", 400],
        ]),
      ),
    ).toEqual(["the median ADR that stands has 360 words, not under 350"]);
  });
});
