import { cloudflare } from "@cloudflare/vite-plugin";
import { reactRouter } from "@react-router/dev/vite";
import tailwindcss from "@tailwindcss/vite";
import { defineConfig } from "vite";
import { reactDomStrings } from "./scripts/react-dom-strings.ts";
import { zodLocalesEnglishOnly } from "./scripts/zod-locales.ts";

export default defineConfig(({ command, isPreview }) => ({
  plugins: [
    cloudflare({
      viteEnvironment: { name: "ssr" },
      // The build prerenders / and /landing through the built Worker in a preview server (ADR 0145). It runs on empty,
      // in-memory state, never on .wrangler/state: a developer's local data (here: hundreds of objects with alarms due,
      // left by a stopped `npm start`) made every build fail with "Prerender: Request failed for /_.data: timeout".
      persistState: command !== "build" && !isPreview,
    }),
    tailwindcss(),
    reactRouter(),
    reactDomStrings(),
    zodLocalesEnglishOnly(),
  ],
  resolve: { tsconfigPaths: true },
}));
