import { defineConfig } from "vitest/config";

// Tests in plain Node: the provider's contract (its official SDK, npm decor8ai,
// and our production adapter against the provider emulator on a free port; its
// published sample answers replayed), and the checks `npm run lint` runs
// (test/node/). No build, no workerd, no browser. docs/decisions/0141-provider-endpoints-follow-the-sdk.md
export default defineConfig({
  // The adapter's imports by alias (@workers/...), as in the app's tsconfig.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/contract/**/*.test.ts", "test/node/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
  },
});
