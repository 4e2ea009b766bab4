// The real-pair evaluation's bindings (vitest.real-pairs.config.ts): the pictures' service and the Images stand-in.
declare namespace Cloudflare {
  interface Env {
    PAIRS: Fetcher;
  }
}
