import { defineConfig } from "vitest/config";
import { INTEGRATION_TEST_TIMEOUT_MS, scaled } from "./test/support/timeouts.js";

/**
 * Two projects: `unit` (offline: pure logic and real middy() pipelines, never Java) and
 * `integration` (connected: HTTP through the real handlers against DynamoDB Local, which the
 * global setup starts once on a free port). Every timeout is scaled by `TEST_TIMEOUT_SCALE`
 * (test/support/timeouts.ts).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";

const env = {
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  AWS_REGION: "local",
  TABLE_NAME: "inventory-api-test",
  RATE_LIMIT_PER_MINUTE: "100000",
  LOG_LEVEL: "WARN",
  SYNC_CURSOR_SECRET: "test-cursor-secret",
};

/**
 * Test files run in parallel on `TEST_WORKERS` workers (default 2); each worker has its own
 * table on the one DynamoDB Local (test/support/connect.ts). `TEST_WORKERS=1` runs them one by one.
 */
const workers = Number(process.env.TEST_WORKERS ?? "2");
if (!Number.isInteger(workers) || workers < 1) throw new Error(`TEST_WORKERS must be a whole number from 1, not "${process.env.TEST_WORKERS}".`);

export default defineConfig({
  test: {
    maxWorkers: workers,
    env,
    projects: [
      {
        test: {
          name: "unit",
          env,
          include: ["lib/**/*.offline.test.ts", "test/unit/**/*.offline.test.ts", "test/infra/**/*.offline.test.ts"],
          testTimeout: scaled(60_000),
        },
      },
      {
        test: {
          name: "integration",
          env,
          include: ["test/integration/**/*.connected.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/connect.ts"],
          testTimeout: scaled(INTEGRATION_TEST_TIMEOUT_MS),
          hookTimeout: scaled(60_000),
        },
      },
    ],
  },
});
