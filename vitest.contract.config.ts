import { defineConfig } from "vitest/config";

// Tests in plain Node. test/contract: the provider's contract (its official SDK,
// npm decor8ai, and our production adapter against the provider emulator on a
// free port; its published sample answers replayed). test/node: the checks
// `npm run lint` runs. test/scripts: the operator's scripts (deploy, the
// migration check). No build, no workerd, no browser.
// docs/decisions/0141-provider-endpoints-follow-the-sdk.md
export default defineConfig({
  // The adapter's imports by alias (@workers/...), as in the app's tsconfig.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/contract/**/*.test.ts", "test/node/**/*.test.ts", "test/scripts/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
