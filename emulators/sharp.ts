// sharp (libvips), which wrangler installs and miniflare's own Images stand-in runs, loaded once on first use: the
// emulators encode and draw with it where the JavaScript codec would take seconds a picture on a loaded machine.
// Null where it cannot be loaded: then the caller's JavaScript path does the work.

export type Sharp = typeof import("sharp").default;

let loaded: Promise<Sharp | null> | null = null;

export function loadSharp(): Promise<Sharp | null> {
  loaded ??= import("sharp").then(
    (m) => m.default,
    () => null,
  );
  return loaded;
}
