import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { MemoryRouter } from "react-router";
import { describe, expect, it } from "vitest";
import { Hero } from "~/components/landing/hero";

// The landing page's hero says only what something measures (issue 46; DECISIONS "Claims the product cannot keep";
// docs/decisions/0231-figures-from-the-agents-side.md): no rating, no testimonial, no "automated" promise. Its
// figures are words the page's inline script replaces with the measured ones (GET /api/figures).

function heroHtml(): string {
  return renderToStaticMarkup(createElement(MemoryRouter, null, createElement(Hero, { startHref: "/auth" })));
}

describe("the landing page's hero", () => {
  it("shows no claim that nothing measures: no stars, no 'Trusted by realtors', no '100% automated'", () => {
    const html = heroHtml();
    expect(html).toContain("Transform Spaces Instantly");
    expect(html).not.toContain("Trusted by realtors");
    expect(html).not.toContain("100% automated");
    // A star rating: five filled stars, or the glyph.
    expect(html).not.toMatch(/★|☆|rating|stars/i);
    expect(html).not.toContain("M10 1.5l2.6 5.3");
  });

  it("promises in words until the measured figures come: no number is rendered into the page", () => {
    const text = heroHtml().replace(/<[^>]+>/g, " ");
    expect(text).toContain("Usually under a minute");
    expect(text).toContain("Results usually in under a minute");
    expect(text).not.toMatch(/\d+\s*%/);
  });
});
