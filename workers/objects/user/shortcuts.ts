import { devToolsEnabled } from "@workers/lib/dev-tools";

// The performance shortcuts of the user's object, each named with what it saves. Each one multiplies the states a
// reader must reason about, so each must earn its place: with dev tools on, DISABLE_SHORTCUTS (a comma-separated
// list of these names) switches it off, and `npm run bench:shortcuts` measures it both ways with production-like D1 and R2
// latency injected (bench/shortcuts.ts). One whose gain the bench cannot tell from its own run-to-run spread is
// removed. docs/decisions/0154-the-user-objects-parts.md

export const SHORTCUTS = {
  /** The commit's batch reads the ended job back and hands it to the long polls it wakes. */
  "hand-over-ended": "one D1 read between a job's commit and the page learning of it",
} as const;

export type Shortcut = keyof typeof SHORTCUTS;

/** Whether a shortcut is taken: always in production; with dev tools, unless DISABLE_SHORTCUTS names it. */
export function shortcutOn(env: Pick<Env, "DEV_TOOLS" | "APP_ENV"> & { DISABLE_SHORTCUTS?: string }, name: Shortcut) {
  if (!devToolsEnabled(env)) return true;
  return !(env.DISABLE_SHORTCUTS ?? "")
    .split(",")
    .map((s) => s.trim())
    .includes(name);
}
