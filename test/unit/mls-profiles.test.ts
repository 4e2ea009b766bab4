import { captionFor, disclosureOf, exportable, labelFor } from "@workers/services/mls/disclosure";
import { describe, expect, it } from "vitest";
import { DEFAULT_LABEL } from "~/shared/label-options";
import {
  DEFAULT_PROFILE_ID,
  fillLink,
  MLS_PROFILES,
  type MlsProfile,
  needsOriginalPage,
  profileById,
  profileOrDefault,
} from "~/shared/mls-profiles";
import { KEPT_NOT_FOR_MLS, REFUSED_NOT_DOWNLOADED, RETURNED_NOT_FOR_MLS } from "~/shared/version-view";

// MLS profiles as data (docs/decisions/0170-mls-profiles.md): each shipped profile names its rule and date, and
// the decisions every export shares (may it go out, its label, its caption) follow the profile.

const URL_ = "https://stagewise.example/o/abcdefghijklmnopqrstuvwxyz";
const settings = { ...DEFAULT_LABEL };
const d = (id: string) => disclosureOf(settings, id);

describe("the shipped profiles", () => {
  it("are the nine the issue names, each with its rule, a date, a caption for every kind and an original placement", () => {
    expect(MLS_PROFILES.map((p) => p.id)).toEqual([
      "california",
      "crmls",
      "sdmls",
      "bay-east",
      "metrolist",
      "stellar",
      "bright",
      "mls-now",
      "link-only",
    ]);
    for (const p of MLS_PROFILES) {
      expect(p.source.rule.length, p.id).toBeGreaterThan(5);
      expect(p.source.date, p.id).toMatch(/^2026-\d{2}(-\d{2})?$/);
      for (const kind of ["stage", "sky", "removal"] as const) {
        expect(p.captions[kind].length, `${p.id} ${kind}`).toBeGreaterThan(3);
        if (p.label) expect(p.label.statement[kind].length).toBeLessThanOrEqual(60);
      }
      expect(["beside", "before", "after", "link"]).toContain(p.original);
    }
    // The default of a new account is California's law.
    expect(DEFAULT_PROFILE_ID).toBe("california");
    expect(DEFAULT_LABEL.profile).toBe("california");
    expect(profileOrDefault("no-longer-shipped").id).toBe("california");
  });

  it("label only where the rule allows one: SDMLS, Stellar, Bright, MLS Now and link-only keep the photo clean", () => {
    const labelled = MLS_PROFILES.filter((p) => p.label).map((p) => p.id);
    expect(labelled).toEqual(["california", "metrolist"]);
    expect(profileById("crmls")!.original).toBe("beside");
    expect(profileById("bay-east")!.original).toBe("after");
    expect(profileById("stellar")!.remarks).toBe("One or more photo(s) was virtually staged.");
    expect(profileById("mls-now")!.unchecked.join(" ")).toContain("first photo must be an unaltered exterior");
  });
});

describe("what a profile makes of a version", () => {
  it("California: two lines (altered, and where the original is) with the QR code; none without a live page", () => {
    const spec = labelFor(d("california"), "stage", URL_);
    expect(spec).toMatchObject({
      lines: [
        "Virtually staged: digitally altered photo",
        "Unaltered original: stagewise.example/o/abcdefghijklmnopqrstuvwxyz",
      ],
      qrUrl: URL_,
    });
    expect(labelFor(d("california"), "stage", null)).toBe("needs-page");
    // Sky and removal are disclosed like staging, in their own words.
    expect(labelFor(d("california"), "sky", URL_)).toMatchObject({
      lines: ["Digitally altered photo: sky replaced", expect.any(String)],
    });
    // The account's own words replace the first line only, of a staged result only (ADR 0342).
    const own = disclosureOf({ ...settings, text: "Virtually staged by us", qr: false }, "california");
    expect(labelFor(own, "stage", URL_)).toMatchObject({
      lines: ["Virtually staged by us", "Unaltered original: stagewise.example/o/abcdefghijklmnopqrstuvwxyz"],
      qrUrl: null,
    });
    expect(labelFor(own, "removal", URL_)).toMatchObject({
      lines: ["Digitally altered photo: furniture removed", expect.any(String)],
    });
  });

  it("SDMLS: nothing on the photo; the caption says Digitally Altered with the original's address", () => {
    expect(labelFor(d("sdmls"), "stage", null)).toBeNull();
    expect(captionFor(d("sdmls"), "stage", URL_)).toBe(`Digitally Altered (virtually staged). Original: ${URL_}`);
    expect(captionFor(d("sdmls"), "stage", null)).toBeNull();
    expect(needsOriginalPage(profileById("sdmls")!)).toBe(true);
    expect(needsOriginalPage(profileById("crmls")!)).toBe(false);
  });

  it("a listing's own profile wins over the account's", () => {
    expect(disclosureOf({ ...settings, profile: "bright" }, "crmls")).toMatchObject({
      from: "listing",
      profile: { id: "crmls" },
    });
    expect(disclosureOf({ ...settings, profile: "bright" }, null)).toMatchObject({
      from: "account",
      profile: { id: "bright" },
    });
  });

  it("never exports a result the structure check refused or that was kept anyway, a kind the profile forbids, or a result that is not staging", () => {
    expect(exportable(d("california"), { kind: "stage", structureVerdict: "kept", structureReturnedAt: null })).toEqual(
      {
        ok: false,
        code: "conflict",
        reason: KEPT_NOT_FOR_MLS,
      },
    );
    expect(
      exportable(d("link-only"), { kind: "removal", structureVerdict: "refused", structureReturnedAt: null }),
    ).toEqual({
      ok: false,
      code: "conflict",
      reason: REFUSED_NOT_DOWNLOADED,
    });
    expect(
      exportable(d("california"), { kind: "stage", structureVerdict: "passed", structureReturnedAt: null }),
    ).toEqual({
      ok: true,
      kind: "stage",
    });
    // The check could not run: charged as any other, and published as any other.
    expect(
      exportable(d("california"), { kind: "stage", structureVerdict: "unchecked", structureReturnedAt: null }),
    ).toEqual({
      ok: true,
      kind: "stage",
    });
    expect(exportable(d("california"), { kind: "sky", structureVerdict: null, structureReturnedAt: null })).toEqual({
      ok: true,
      kind: "sky",
    });
    // Returned by its owner ("This result changed the room"): never, even flagged and confirmed before (ADR 0263).
    for (const v of [
      { kind: "stage" as const, structureVerdict: "passed" as const, structureReturnedAt: 1 },
      { kind: "stage" as const, structureVerdict: "flagged" as const, structureReturnedAt: 1, structureConfirmedAt: 1 },
      { kind: "stage" as const, structureVerdict: "flagged" as const, structureReturnedAt: 1 },
    ])
      expect(exportable(d("california"), v)).toEqual({ ok: false, code: "conflict", reason: RETURNED_NOT_FOR_MLS });
    // A future wall-colour result: not staging, whatever the profile.
    const paint = exportable(d("california"), {
      kind: "paint" as "stage",
      structureVerdict: null,
      structureReturnedAt: null,
    });
    expect(paint).toMatchObject({ ok: false, code: "forbidden", reason: expect.stringContaining("not staging") });
    // A profile that forbids sky replacements leaves them out, naming itself and its rule.
    const noSky: MlsProfile = { ...profileById("bright")!, id: "no-sky", publishable: ["stage", "removal"] };
    const res = exportable(
      { profile: noSky, settings, from: "listing" },
      { kind: "sky", structureVerdict: null, structureReturnedAt: null },
    );
    expect(res).toMatchObject({
      ok: false,
      code: "forbidden",
      reason: expect.stringContaining("Bright MLS does not allow publishing sky replacement"),
    });
  });

  it("fills {link} with the full address in captions and the short one on labels", () => {
    expect(fillLink("See {link}", URL_)).toBe(`See ${URL_}`);
    expect(fillLink("See {link}", URL_, true)).toBe("See stagewise.example/o/abcdefghijklmnopqrstuvwxyz");
    expect(fillLink("No link", null)).toBe("No link");
  });
});
