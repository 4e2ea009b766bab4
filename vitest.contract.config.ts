import { defineConfig } from "vitest/config";

// Tests in plain Node. test/contract: the provider's official SDK (npm decor8ai)
// and our production adapter, both against the provider emulator on a free port
// (docs/decisions/0141-provider-endpoints-follow-the-sdk.md). test/scripts: the
// operator's scripts (deploy, the migration check). No build, no workerd, no browser.
export default defineConfig({
  // The adapter's imports by alias (@workers/...), as in the app's tsconfig.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/contract/**/*.test.ts", "test/scripts/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
