import { devToolsEnabled } from "@workers/lib/dev-tools";

// The performance shortcuts of the user's object, each named with what it saves. Each one multiplies the states a
// reader must reason about, so each must earn its place: with dev tools on, DISABLE_SHORTCUTS (a comma-separated
// list of these names) switches it off, and `npm run bench:shortcuts` measures it both ways with production-like D1 and R2
// latency injected (bench/shortcuts.ts). One whose gain the bench cannot tell from its own run-to-run spread is
// removed. docs/decisions/0154-the-user-objects-parts.md

// None is left: the five measured on 2026-11-26 did not beat the bench's spread and were removed (ADR 0154, "The
// shortcuts' verdict"). A new one is added here with its sentence, read through shortcutOn, and measured the same way.
export const SHORTCUTS: Readonly<Record<string, string>> = {};

export type Shortcut = keyof typeof SHORTCUTS;

/** Whether a shortcut is taken: always in production; with dev tools, unless DISABLE_SHORTCUTS names it. */
export function shortcutOn(env: Pick<Env, "DEV_TOOLS" | "APP_ENV"> & { DISABLE_SHORTCUTS?: string }, name: Shortcut) {
  if (!devToolsEnabled(env)) return true;
  return !(env.DISABLE_SHORTCUTS ?? "")
    .split(",")
    .map((s) => s.trim())
    .includes(name);
}
