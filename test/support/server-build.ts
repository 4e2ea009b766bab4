// Stands in for `virtual:react-router/server-build` (which exists only under
// the React Router Vite plugin) when the Worker entry runs in vitest. Pages are
// tested end to end against the real build (test/e2e); the workerd suites test
// the API, the Durable Objects and the services.
import type { ServerBuild } from "react-router";

const build: ServerBuild = {
  entry: {
    module: {
      default: () => new Response("react-router pages are not part of the workerd test build", { status: 404 }),
    },
  },
  routes: {},
  assets: { entry: { module: "", imports: [] }, routes: {}, url: "", version: "test" },
  assetsBuildDirectory: "",
  basename: "/",
  future: {},
  isSpaMode: false,
  prerender: [],
  publicPath: "/",
  routeDiscovery: { mode: "lazy", manifestPath: "/__manifest" },
  ssr: true,
} as unknown as ServerBuild;

export default build;
export const entry: ServerBuild["entry"] = build.entry;
export const routes: ServerBuild["routes"] = build.routes;
export const assets: ServerBuild["assets"] = build.assets;
export const assetsBuildDirectory: string = build.assetsBuildDirectory;
export const basename: string | undefined = build.basename;
export const future: ServerBuild["future"] = build.future;
export const isSpaMode: boolean = build.isSpaMode;
export const prerender: string[] = build.prerender;
export const publicPath: string = build.publicPath;
export const routeDiscovery: ServerBuild["routeDiscovery"] = build.routeDiscovery;
export const ssr: boolean = build.ssr;
