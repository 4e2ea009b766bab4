import { disclosureOf, labelLines } from "@workers/services/mls/disclosure";
import { labelDefaultsInput } from "@workers/services/mls/labels";
import { describe, expect, it } from "vitest";
import { DEFAULT_LABEL } from "~/shared/label-options";
import { profileById } from "~/shared/mls-profiles";

// An account's own wording of the label (mls-rules.md: "a reasonably conspicuous statement ... that the image was
// altered"): it must still say so, and it speaks for staged results only.

const california = profileById("california")!;
const statement = (text: string | null, kind: "stage" | "sky" | "removal") =>
  labelLines(disclosureOf({ ...DEFAULT_LABEL, text }, null), kind, "https://example.test/o/x")?.[0];

describe("the account's label wording", () => {
  it("is refused when it does not say the photo was altered", () => {
    const parse = (text: string) => labelDefaultsInput.safeParse({ ...DEFAULT_LABEL, text });
    for (const ok of [
      "Virtually staged",
      "Digitally altered by ACME Realty",
      "VIRTUAL STAGING",
      "Digitally staged",
      "",
    ])
      expect(parse(ok).success, ok).toBe(true);
    for (const bad of ["Welcome home", "Staged by ACME", "Alteration-free"]) {
      const r = parse(bad);
      expect(r.success, bad).toBe(false);
      expect(r.error?.issues[0]?.message).toContain("must say the photo was altered");
    }
  });

  it("replaces the statement of a staged result only; a sky or a removal keeps the profile's words", () => {
    expect(statement("Virtually staged by ACME", "stage")).toBe("Virtually staged by ACME");
    expect(statement("Virtually staged by ACME", "sky")).toBe(california.label!.statement.sky);
    expect(statement("Virtually staged by ACME", "removal")).toBe(california.label!.statement.removal);
  });

  it("a wording saved before the rule that says nothing of it is not drawn: the profile's statement is", () => {
    expect(statement("Welcome home", "stage")).toBe(california.label!.statement.stage);
    expect(statement(null, "stage")).toBe(california.label!.statement.stage);
  });
});
