import { describe, expect, it } from "vitest";
import { getStartedPath, isLandingPath, scrollTarget } from "~/lib/get-started";

describe("getStartedPath", () => {
  it("sends someone who can stage to the dashboard and everyone else to sign-up", () => {
    expect(getStartedPath(null)).toBe("/auth");
    expect(getStartedPath(undefined)).toBe("/auth");
    expect(getStartedPath({ hasPlan: false, credits: 0 })).toBe("/auth");
    expect(getStartedPath({ hasPlan: true, credits: 0 })).toBe("/dashboard");
    expect(getStartedPath({ hasPlan: false, credits: 3 })).toBe("/dashboard");
  });
});

describe("landing-page scrolling", () => {
  it("knows the landing paths", () => {
    expect(isLandingPath("/")).toBe(true);
    expect(isLandingPath("/landing")).toBe(true);
    expect(isLandingPath("/gallery")).toBe(false);
  });

  it("accepts only the landing sections as a scroll target from router state", () => {
    expect(scrollTarget({ scrollTo: "features" })).toBe("features");
    expect(scrollTarget({ scrollTo: "before-after-gallery" })).toBe("before-after-gallery");
    expect(scrollTarget({ scrollTo: "main" })).toBeNull();
    expect(scrollTarget({})).toBeNull();
    expect(scrollTarget(null)).toBeNull();
    expect(scrollTarget("features")).toBeNull();
  });
});
