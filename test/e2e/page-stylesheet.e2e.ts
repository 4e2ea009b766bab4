import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { pageStylesheet } from "../../scripts/page-stylesheet.ts";
import { baseUrl, browserForFile, createUser, signedInContext } from "./browser.ts";

// A prerendered page inlines only the rules of the app stylesheet that can match it (scripts/page-stylesheet.ts,
// ADR 0150). What must hold: the page looks exactly as it would with the whole stylesheet, on a phone and on a
// desktop, signed out and signed in (the signed-in hint shows other elements), and the cut is real.

const INLINE_STYLE = /<style id="app-css">([\s\S]*?)<\/style>/;

const b = browserForFile();
let fullCss = "";
beforeAll(async () => {
  // A page the Worker renders inlines the whole stylesheet.
  const html = await (await fetch(`${baseUrl()}/features`)).text();
  fullCss = INLINE_STYLE.exec(html)?.[1] ?? "";
});

/**
 * Compares, inside the page, every element's computed style (and its ::before, ::after and ::marker) under the
 * inlined cut with the same under the whole stylesheet; only the counts and the first differences cross back.
 */
function compareWithWhole(page: Page, css: string): Promise<{ elements: [number, number]; differing: string[] }> {
  return page.evaluate((whole) => {
    const snapshot = (): string[] => {
      for (const a of document.getAnimations()) a.finish();
      const out: string[] = [];
      for (const el of Array.from(document.querySelectorAll("*"))) {
        const name = `${el.tagName}${el.id ? `#${el.id}` : ""}.${el.getAttribute("class") ?? ""}`;
        for (const pseudo of [null, "::before", "::after", "::marker"]) {
          const style = getComputedStyle(el, pseudo);
          const values: string[] = [];
          for (let i = 0; i < style.length; i++) {
            const prop = style.item(i);
            values.push(`${prop}:${style.getPropertyValue(prop)}`);
          }
          out.push(`${name}${pseudo ?? ""}\t${values.join(";")}`);
        }
      }
      return out;
    };
    const withCut = snapshot();
    const style = document.getElementById("app-css");
    if (style) style.textContent = whole;
    const withWhole = snapshot();
    // Each difference names the element and only the properties that differ.
    const differing = withCut
      .map((s, i) => [s, withWhole[i] ?? ""] as const)
      .filter(([a, b]) => a !== b)
      .slice(0, 3)
      .map(([a, b]) => {
        const [name = "", cut = ""] = a.split("\t");
        const inWhole = new Set((b.split("\t")[1] ?? "").split(";"));
        return `${name} ${cut
          .split(";")
          .filter((p) => !inWhole.has(p))
          .slice(0, 5)
          .join(";")}`;
      });
    return { elements: [withCut.length, withWhole.length] as [number, number], differing };
  }, css);
}

async function expectSameAsWholeStylesheet(page: Page, path: string): Promise<void> {
  await page.emulateMedia({ reducedMotion: "reduce" });
  await page.goto(path);
  await page.waitForSelector("html[data-hydrated=true]");
  // `/` fills its measured figures after its hero picture's paint: compare once that has settled, not across it.
  if (await page.locator("[data-figure-value]").count()) await page.waitForSelector("html[data-figures]");
  const inlined = await page.locator("#app-css").textContent();
  // The cut is real: the page carries less than the whole stylesheet.
  expect(inlined?.length ?? 0, path).toBeGreaterThan(0);
  expect(inlined?.length ?? 0, path).toBeLessThan(fullCss.length * 0.75);
  const { elements, differing } = await compareWithWhole(page, fullCss);
  expect(elements[0], path).toBeGreaterThan(0);
  expect(elements[0], path).toBe(elements[1]);
  expect(differing, path).toEqual([]);
}

describe("the prerendered pages' stylesheet", () => {
  it("keeps a rule unless one of its compound selectors needs a class the page lacks", () => {
    const css =
      ".a{color:red}.b{color:blue}.a.b{margin:0}.a .b{padding:0}:where(.b>*){gap:0}:not(.b){top:0}" +
      "p{left:0}@media (width>=40rem){.b{color:green}.a{color:gray}}.b,.a:hover{right:0}";
    const { css: out, removed } = pageStylesheet(css, '<p class="a other">x</p>');
    expect(out).toContain(".a{color:red}");
    expect(out).not.toContain("blue");
    expect(out).not.toContain(".a.b");
    expect(out).not.toContain(".a .b");
    expect(out).not.toContain(":where");
    // Absence can match: a class inside :not() never removes a rule.
    expect(out).toContain(":not(.b){top:0}");
    expect(out).toContain("p{left:0}");
    expect(out).toContain("color:gray");
    expect(out).not.toContain("green");
    // A rule is kept whole when one of its selectors can match.
    expect(out).toContain(".b,.a:hover{right:0}");
    expect(removed).toBe(5);
  });

  it("reads class names as the browser does: entities decoded, any whitespace between them", () => {
    const { css } = pageStylesheet(
      ".w-1\\/2{width:50%}.x{top:0}.y{left:0}.z{right:0}",
      "<div class='w-1/2&#10;x'>y</div><p class=\"z&amp;\"></p>",
    );
    expect(css).toContain("width:50%");
    expect(css).toContain(".x{top:0}");
    expect(css).not.toContain(".y");
    // "z&amp;" is the class "z&", not "z".
    expect(css).not.toContain(".z");
  });

  // One case per page and viewport: each compares about a thousand computed styles twice, which takes seconds.
  for (const viewport of [
    { name: "a phone", width: 390, height: 660 },
    { name: "a desktop", width: 1280, height: 900 },
  ]) {
    for (const path of ["/", "/landing"]) {
      it(`renders ${path} on ${viewport.name} exactly as the whole stylesheet does`, async () => {
        expect(fullCss.length).toBeGreaterThan(20_000);
        const ctx = await b.newContext({ viewport: { width: viewport.width, height: viewport.height } });
        const page = await b.newPage(ctx);
        await expectSameAsWholeStylesheet(page, path);
        page.assertClean();
      });
    }
  }

  it("renders / for a signed-in visitor exactly as the whole stylesheet does", async () => {
    const user = await createUser({ credits: 3 });
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    // A page the Worker renders leaves the signed-in hint that / reads.
    await page.goto("/dashboard");
    await expectSameAsWholeStylesheet(page, "/");
    page.assertClean();
  });
});
