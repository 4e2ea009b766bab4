import { defineConfig } from "vitest/config";

// End-to-end tests: the production build under local workerd with every
// emulator, started the way `npm start` starts it (test/e2e/global-setup.ts),
// driven by Debian's Chromium through playwright-core.
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    globalSetup: ["./test/e2e/global-setup.ts"],
    // Removes the users each test made (test/e2e/setup.ts).
    setupFiles: ["./test/e2e/setup.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One browser-heavy file at a time on a 2-core machine.
    fileParallelism: false,
  },
});
