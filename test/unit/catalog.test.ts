import { describe, expect, it } from "vitest";
import {
  DESIGN_STYLES,
  findPlan,
  findPlanByLookupKey,
  isSkyType,
  PLANS,
  QUICK_FURNITURE_STYLES,
  QUICK_ROOM_TYPES,
  ROOM_TYPES,
  SKY_TYPES,
  TEAM_PLAN,
  yearlyMonthlyEquivalent,
} from "~/shared/catalog";
import { newSeed, providerStaging, roomCode, styleCode } from "~/shared/staging-codes";

describe("plans", () => {
  it("has the five checkout-catalogue plans with their prices and credits", () => {
    expect(PLANS.map((p) => [p.name, p.price, p.yearlyPrice, p.credits])).toEqual([
      ["Small plan", 29, 228, 9],
      ["Starter plan", 49, 384, 22],
      ["Popular plan", 89, 468, 44],
      ["Standard plan", 129, 708, 66],
      ["Professional plan", 149, 1152, 88],
    ]);
  });

  it("grows in credits as it grows in price", () => {
    for (let i = 1; i < PLANS.length; i++) {
      expect(PLANS[i]!.credits).toBeGreaterThan(PLANS[i - 1]!.credits);
      expect(PLANS[i]!.price).toBeGreaterThan(PLANS[i - 1]!.price);
    }
  });

  it("shows the yearly price per month to two decimals", () => {
    expect(PLANS.map(yearlyMonthlyEquivalent)).toEqual(["19.00", "32.00", "39.00", "59.00", "96.00"]);
  });

  it("finds a plan by id, by name in any case, and by Stripe lookup key", () => {
    expect(findPlan("popular")?.credits).toBe(44);
    expect(findPlan("Popular Plan")?.id).toBe("popular");
    expect(findPlan("nope")).toBeUndefined();
    expect(findPlan(null)).toBeUndefined();
    expect(findPlanByLookupKey("standard_yearly")).toMatchObject({ plan: { id: "standard" }, interval: "year" });
    expect(findPlanByLookupKey("unknown")).toBeUndefined();
  });

  it("gives every plan distinct lookup keys", () => {
    const keys = PLANS.flatMap((p) => [p.lookupKeys.month, p.lookupKeys.year]);
    expect(new Set(keys).size).toBe(10);
  });
});

describe("the team plan", () => {
  it("is priced and credited per seat, monthly, with its own lookup key", () => {
    expect(TEAM_PLAN).toMatchObject({ id: "team", name: "Team plan", pricePerSeat: 59, creditsPerSeat: 30 });
    expect(TEAM_PLAN.minSeats).toBe(1);
    expect(TEAM_PLAN.maxSeats).toBeGreaterThan(TEAM_PLAN.minSeats);
    const keys = PLANS.flatMap((p) => [p.lookupKeys.month, p.lookupKeys.year]);
    expect(keys).not.toContain(TEAM_PLAN.lookupKey);
  });

  it("is not one of the personal plans (a person cannot check out a team seat as their own plan)", () => {
    expect(findPlan("team")).toBeUndefined();
    expect(findPlan("Team plan")).toBeUndefined();
    expect(findPlanByLookupKey(TEAM_PLAN.lookupKey)).toBeUndefined();
  });

  it("costs no more per credit than the personal plan of nearest size", () => {
    const perCredit = TEAM_PLAN.pricePerSeat / TEAM_PLAN.creditsPerSeat;
    const nearest = [...PLANS].sort(
      (a, b) => Math.abs(a.credits - TEAM_PLAN.creditsPerSeat) - Math.abs(b.credits - TEAM_PLAN.creditsPerSeat),
    )[0]!;
    expect(perCredit).toBeLessThanOrEqual(nearest.price / nearest.credits);
  });
});

describe("room types", () => {
  it("has 31 with unique provider codes", () => {
    expect(ROOM_TYPES).toHaveLength(31);
    expect(new Set(ROOM_TYPES.map((r) => r.code)).size).toBe(31);
  });

  it("maps names and codes, and knows no other room", () => {
    expect(roomCode("Office Room")).toBe("office");
    expect(roomCode(" Study Room ")).toBe("study_room");
    expect(roomCode("walkincloset")).toBe("walkincloset");
    expect(roomCode("Outdoor")).toBe("back_patio");
    expect(roomCode("Ballroom")).toBeUndefined();
  });
});

describe("design styles", () => {
  it("has 52 with unique provider codes", () => {
    expect(DESIGN_STYLES).toHaveLength(52);
    expect(new Set(DESIGN_STYLES.map((s) => s.code)).size).toBe(52);
  });

  it("lower-cases and strips spaces and hyphens, with the documented exceptions", () => {
    const code = (name: string) => DESIGN_STYLES.find((s) => s.name === name)?.code;
    expect(code("Mid-Century Modern")).toBe("midcenturymodern");
    expect(code("Neo-Traditional")).toBe("neotraditional");
    expect(code("Coastal Grandmother")).toBe("coastalgrandmother");
    expect(code("Asian Zen")).toBe("asian_zen");
    expect(code("Wabi Sabi")).toBe("wabi_sabi");
    expect(code("High Tech")).toBe("high_tech");
    expect(code("MODERNGLAM")).toBe("modernglam");
    expect(code("TRANSITIONALGLAM")).toBe("transitionalglam");
  });

  it("maps quick styles first, then names and codes, and falls back to modern", () => {
    expect(styleCode("Scandinavian")).toBe("scandinavian");
    expect(styleCode("Luxury")).toBe("luxemodern");
    expect(styleCode("Standard")).toBe("transitional");
    expect(styleCode("Brutalist")).toBe("modern");
    expect(styleCode("")).toBe("modern");
  });

  it("sends a stored choice with one set of defaults and the provider's style code", () => {
    expect(providerStaging({})).toEqual({ roomType: "livingroom", designStyle: "modern", providerStyle: "modern" });
    const glam = DESIGN_STYLES.find((s) => s.provider !== s.code)!;
    expect(providerStaging({ roomType: "bedroom", designStyle: glam.code })).toEqual({
      roomType: "bedroom",
      designStyle: glam.code,
      providerStyle: glam.provider,
    });
  });

  it("draws a seed the provider takes, a new one each time", () => {
    const seeds = new Set(Array.from({ length: 20 }, newSeed));
    expect(seeds.size).toBeGreaterThan(1);
    for (const s of seeds) expect(Number.isInteger(s) && s >= 0 && s < 2_147_483_647).toBe(true);
  });
});

describe("sky types and the quick dialog", () => {
  it("has day, dusk and night only", () => {
    expect(SKY_TYPES).toEqual(["day", "dusk", "night"]);
    expect(isSkyType("dusk")).toBe(true);
    expect(isSkyType("noon")).toBe(false);
    expect(isSkyType(3)).toBe(false);
  });

  it("maps the 7 quick room types and 3 furniture styles to provider codes", () => {
    const rooms = new Set(ROOM_TYPES.map((r) => r.code));
    const styles = new Set(DESIGN_STYLES.map((s) => s.code));
    expect(QUICK_ROOM_TYPES.map((r) => r.name)).toEqual([
      "Living Room",
      "Bedroom",
      "Kitchen",
      "Bathroom",
      "Kids Room",
      "Office Room",
      "Outdoor",
    ]);
    for (const r of QUICK_ROOM_TYPES) expect(rooms.has(r.code)).toBe(true);
    expect(QUICK_FURNITURE_STYLES.map((s) => s.name)).toEqual(["Standard", "Modern", "Luxury"]);
    for (const s of QUICK_FURNITURE_STYLES) expect(styles.has(s.code)).toBe(true);
  });
});
