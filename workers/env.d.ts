// Bindings, variables and secrets are typed by `npm run types` (wrangler types)
// in worker-configuration.d.ts; the optional settings come from workers/config.ts.
type OptionalSettings = import("./config").OptionalSettings;
interface Env extends OptionalSettings {}
declare namespace Cloudflare {
  interface Env extends OptionalSettings {}
}
