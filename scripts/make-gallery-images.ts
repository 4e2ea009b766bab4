// Makes the before/after pictures under public/gallery/: five rooms drawn by
// scripts/gallery/ as SVG (empty, then staged), rasterised by the Chromium the
// e2e suite uses, at every width of app/lib/gallery.ts. Run once after changing
// a room; the JPEGs are committed.
//
//   npx node scripts/make-gallery-images.ts [room-id ...]
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { IMAGE_WIDTHS } from "../app/lib/gallery.ts";
import { ROOMS, render } from "./gallery/rooms.ts";

const ROOT = resolve(import.meta.dirname, "..");
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const QUALITY: Record<number, number> = { 480: 78, 720: 74, 960: 72, 1440: 64 };

async function main() {
  const only = process.argv.slice(2);
  const outDir = join(ROOT, "public", "gallery");
  mkdirSync(outDir, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    for (const room of ROOMS.filter((r) => only.length === 0 || only.includes(r.id))) {
      for (const staged of [false, true]) {
        for (const width of IMAGE_WIDTHS) {
          const height = Math.round((width * 2) / 3);
          const page = await browser.newPage({ viewport: { width, height } });
          await page.setContent(
            `<!doctype html><html><body style="margin:0;overflow:hidden">${render(room, staged, width, height)}</body></html>`,
          );
          const file = join(outDir, `${room.id}-${staged ? "after" : "before"}-${width}.jpg`);
          writeFileSync(file, await page.screenshot({ type: "jpeg", quality: QUALITY[width] ?? 70 }));
          await page.close();
          console.log(`${file.slice(ROOT.length + 1)}  ${(statSync(file).size / 1024).toFixed(1)} KB`);
        }
      }
    }
  } finally {
    await browser.close();
  }
}

await main();
