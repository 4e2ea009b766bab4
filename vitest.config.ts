import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { startImagesDrawEmulator } from "./emulators/images-draw.ts";
import { buildChecker, CHECKER_QUEUE } from "./scripts/checker-build.ts";

// Unit and integration tests, run inside workerd with the Worker's real
// bindings (local D1, R2, Durable Objects) and the real migrations applied.
const path = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path("./migrations"));
  // The check Worker (workers/checker) beside the app, as in production: the app's objects send it structure checks
  // on the queue and it answers them by RPC. Bundled by wrangler as for a deploy.
  const checker = buildChecker();
  // The Images binding here is miniflare's stand-in, which leaves draw() out: labels are drawn by the local images
  // emulator (docs/decisions/0250-labels-drawn-by-images.md), in this Node process, on a port the system picks.
  const imagesEmulator = await startImagesDrawEmulator({ port: 0 });
  imagesEmulator.unref();
  const imagesPort = (imagesEmulator.address() as { port: number }).port;
  return {
    plugins: [
      cloudflareTest({
        main: "./workers/app.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            APP_ENV: "test",
            APP_ORIGIN: "http://localhost",
            DEV_TOOLS: "1",
            MAIL_API_URL: "http://mail.test",
            MAIL_API_KEY: "test-mail-key",
            PROVIDER_BASE_URL: "http://provider.test",
            PROVIDER_API_KEY: "test-provider-key",
            // Two listed keys (t2 signs, t1 verifies) and the older single secret (key "0", verifies): the setup of
            // a rotation in progress (docs/decisions/0182-signing-keys-rotate.md).
            SIGNING_KEYS: "t2:test-signing-key-two-not-for-production,t1:test-signing-key-one-not-for-production",
            SIGNING_SECRET: "test-signing-secret",
            PROVIDER_TIMEOUT_MS: "1500",
            STRIPE_SECRET_KEY: "sk_test_vitest",
            STRIPE_WEBHOOK_SECRET: "whsec_vitest_secret",
            STRIPE_API_URL: "http://stripe.test",
            GOOGLE_CLIENT_ID: "test-google-client",
            GOOGLE_CLIENT_SECRET: "test-google-secret",
            GOOGLE_ISSUER_URL: "http://oauth.test",
            IMAGES_LOCAL_URL: `http://127.0.0.1:${imagesPort}`,
            // Error reports go to a closed local port (refused at once); test/integration/error-reporting.test.ts
            // stubs fetch for it and reads what arrives.
            SENTRY_DSN: "http://testsinkkey@127.0.0.1:9/1",
          },
          workers: [
            {
              name: "stagewise-checker",
              modules: true,
              scriptPath: checker,
              compatibilityDate: "2026-10-01",
              compatibilityFlags: ["nodejs_compat"],
              bindings: { APP_ENV: "test" },
              r2Buckets: { PHOTOS: "stagewise-photos" },
              images: { binding: "IMAGES" },
              // The test runner is the app's Worker here: the plugin names it vitest-plugin-runner-<project>.
              durableObjects: { USER_OBJECT: { className: "UserObject", scriptName: "vitest-plugin-runner-" } },
              queueConsumers: { [CHECKER_QUEUE]: { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: 2 } },
            },
          ],
        },
      }),
    ],
    resolve: {
      tsconfigPaths: true,
      alias: { "virtual:react-router/server-build": path("./test/support/server-build.ts") },
    },
    test: {
      include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
      setupFiles: ["./test/support/setup.ts"],
      // Concurrency tests move many requests through workerd; on a loaded 2-core machine 5 s is too tight.
      testTimeout: 20_000,
    },
  };
});
