import type { Config } from "@react-router/dev/config";
import { finishPrerenderedPages } from "./scripts/prerendered-pages.ts";
import { PRERENDERED_PAGES } from "./workers/http/static-pages.ts";

// The prerender runs the built Worker in local workerd, which would first try to download Cloudflare's sample
// `request.cf` object from the internet; a build must not depend on the network (offline it falls back after a
// timeout). The placeholder object is what a local run uses anyway.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

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
