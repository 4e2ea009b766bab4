import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ROOT } from "../../scripts/stack.ts";

const AXE_SOURCE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");

export interface AxeProblem {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page and returns its serious and critical violations.
 * The source is evaluated through the DevTools protocol, so the page keeps its
 * real Content-Security-Policy.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeProblem[]> {
  await settle(page);
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<AxeResults> } }).axe;
    interface AxeResults {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
    }
    const results = await axe.run(document, { resultTypes: ["violations"] });
    return results.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({
        id: v.id,
        impact: v.impact ?? "",
        help: v.help,
        nodes: v.nodes.map((n) => n.target.join(" ")),
      }));
  });
}

/**
 * Scrolls through the page so content that reveals on scroll is shown, then
 * waits until no finite animation is running: axe judges the page as people see it
 * once it has settled, not half-way through a fade.
 */
async function settle(page: Page) {
  await page.evaluate(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));
    for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight / 2) {
      window.scrollTo(0, y);
      await frame();
    }
    window.scrollTo(0, 0);
  });
  await page.waitForFunction(
    () =>
      !document.querySelector("[data-reveal=hidden]") &&
      // Endless animations (spinners) never settle; everything else must have finished.
      document
        .getAnimations()
        .every((a) => a.playState !== "running" || a.effect?.getTiming().iterations === Number.POSITIVE_INFINITY),
  );
}
