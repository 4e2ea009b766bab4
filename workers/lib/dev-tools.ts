/** Development-only features (seeding, /api/dev, /dev pages) exist only when the local configuration turns them on. */
export function devToolsEnabled(env: Pick<Env, "DEV_TOOLS" | "APP_ENV">): boolean {
  return env.DEV_TOOLS === "1" && env.APP_ENV !== "production";
}
