import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { INTEGRATION_TEST_TIMEOUT_MS, scaled } from "./test/support/timeouts.js";

/**
 * Two kinds of tests: `unit` (offline: pure logic and real middy() pipelines, never Java) and
 * `integration` (connected: HTTP through the real handlers against DynamoDB Local, which the
 * global setup starts once on a free port). Every timeout is scaled by `TEST_TIMEOUT_SCALE`
 * (test/support/timeouts.ts).
 *
 * Offline files share one module graph per worker (`isolate: false`: 62 files took 17 s
 * instead of 24 s, and 25 CPU-s instead of 38, on 2 cores), so they must leave no state behind
 * (each restores what it changes in `process.env`, timers and spies). A file that replaces
 * or reloads modules (`vi.mock`, `vi.resetModules`), or must see them evaluated itself, runs in
 * `unit-mocks`, with a module graph of its own: in a shared one the real module may already be
 * loaded, or the mock or the reloaded instances outlive the file. Connected files stay
 * isolated: they start servers, pollers and queues whose timers would outlive the file.
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

const OFFLINE_ROOTS = ["lib", "test/unit", "test/infra"];
const OFFLINE = OFFLINE_ROOTS.map((root) => `${root}/**/*.offline.test.ts`);

/** Offline test files that call `vi.mock`, `vi.doMock` or `vi.resetModules`, found by reading them. */
function offlineFilesReplacingModules(): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith(".offline.test.ts") && /\bvi\.(?:mock|doMock|resetModules)\(/.test(readFileSync(path, "utf8")))
        found.push(path.split("\\").join("/"));
    }
  };
  for (const root of OFFLINE_ROOTS) visit(root);
  return found;
}
const replacingModules = offlineFilesReplacingModules();

export default defineConfig({
  test: {
    maxWorkers: workers,
    env,
    projects: [
      {
        test: {
          name: "unit",
          env,
          include: OFFLINE,
          exclude: replacingModules,
          isolate: false,
          testTimeout: scaled(60_000),
        },
      },
      ...(replacingModules.length > 0 ? [{ test: { name: "unit-mocks", env, include: replacingModules, testTimeout: scaled(60_000) } }] : []),
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
