import type { Config } from "@react-router/dev/config";
import { finishPrerenderedPages } from "./scripts/prerendered-pages.ts";
import { PRERENDERED_PAGES } from "./workers/http/static-pages.ts";

const config: Config = {
  ssr: true,
  // Public pages without JavaScript are written to static files at build time, rendered by the built Worker
  // itself (docs/decisions/0145-public-pages-prerendered.md); every other page is rendered per request.
  prerender: [...PRERENDERED_PAGES],
  async buildEnd({ viteConfig }) {
    await finishPrerenderedPages(viteConfig.environments.client?.build.outDir ?? "build/client");
  },
};

export default config;
