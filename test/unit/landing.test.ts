import { loginRedirect } from "@workers/http/auth";
import { landingPath, returnPath, safeRedirectPath } from "@workers/services/accounts/landing";
import { describe, expect, it } from "vitest";

describe("safeRedirectPath", () => {
  it("keeps same-origin paths with their query and hash", () => {
    expect(safeRedirectPath("/checkout?planId=starter")).toBe("/checkout?planId=starter");
    expect(safeRedirectPath("/dashboard#photos")).toBe("/dashboard#photos");
    expect(safeRedirectPath("/a/../billing")).toBe("/billing");
  });

  it("refuses everything that a browser would take off our origin", () => {
    for (const v of [
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r\n/evil.example",
      "\t//evil.example",
      "//evil.example",
      "/\\evil.example",
      "\\/evil.example",
      "\\\\evil.example",
      "https://evil.example/x",
      "http:evil.example",
      "javascript:alert(1)",
      "data:text/html,hi",
      "evil.example",
      "",
      "x".repeat(3000),
    ]) {
      expect(safeRedirectPath(v), JSON.stringify(v)).toBeNull();
    }
  });

  it("always answers a valid header value (no CR, LF, NUL or tab)", () => {
    for (const v of ["/a\r\nSet-Cookie: x=1", "/a\u0000b", "/a\tb", "/%0d%0aX: y", "/caf\u00e9"]) {
      const out = safeRedirectPath(v);
      expect(out, JSON.stringify(v)).not.toBeNull();
      expect([...out!].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)).toBe(false);
      expect(() => new Headers({ Location: out! })).not.toThrow();
    }
  });

  it("turns a data request's address into its page's", () => {
    expect(safeRedirectPath("/dashboard.data?_routes=routes%2Fdashboard&view=trash")).toBe("/dashboard?view=trash");
    expect(safeRedirectPath("/_root.data")).toBe("/");
    expect(safeRedirectPath("/billing.data")).toBe("/billing");
  });

  it("accepts an absolute address only on the configured origin", () => {
    expect(safeRedirectPath("https://stagewise.example.com/billing", "https://stagewise.example.com")).toBe("/billing");
    expect(safeRedirectPath("https://stagewise.example.com.evil.example/", "https://stagewise.example.com")).toBeNull();
    expect(safeRedirectPath("https://stagewise.example.com@evil.example/", "https://stagewise.example.com")).toBeNull();
  });

  it("never returns to a sign-in page, and lands by plan and credits otherwise", () => {
    expect(returnPath("/login?x=1")).toBeNull();
    expect(landingPath({ plan: null, credits: 0 }, "/\t/evil.example")).toBe("/plans");
    expect(landingPath({ plan: null, credits: 3 }, null)).toBe("/dashboard");
    expect(landingPath({ plan: null, credits: 0 }, "/gallery")).toBe("/gallery");
  });

  it("sends a signed-out data request to sign in with its page's address, whatever the Host said", () => {
    const at = (url: string) => loginRedirect(new Request(url)).headers.get("Location");
    expect(at("http://evil.example/dashboard.data?_routes=routes%2Fdashboard%2Fdashboard&view=trash")).toBe(
      "/login?redirectTo=%2Fdashboard%3Fview%3Dtrash",
    );
    expect(at("http://localhost/_root.data")).toBe("/login?redirectTo=%2F");
    expect(at("http://localhost/%2F%2Fevil.example")).toBe(
      `/login?redirectTo=${encodeURIComponent("/%2F%2Fevil.example")}`,
    );
  });
});
