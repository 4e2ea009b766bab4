import { defineConfig } from "vitest/config";

// Contract tests in plain Node: the provider's official SDK (npm decor8ai) and
// our production adapter, both against the provider emulator on a free port.
// No build, no workerd, no browser. docs/decisions/0141-provider-endpoints-follow-the-sdk.md
export default defineConfig({
  // The adapter's imports by alias (@workers/...), as in the app's tsconfig.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/contract/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
