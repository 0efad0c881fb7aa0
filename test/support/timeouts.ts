/**
 * Every time limit of the suite, scaled by ONE setting: `TEST_TIMEOUT_SCALE` (default 1; e.g. 3
 * on a slow or busy machine) multiplies vitest's test and hook timeouts (vitest.config.ts),
 * each test's own timeout and every bound a test or helper waits within (`scaled`). A limit
 * that runs out says so: vitest's "Test timed out in N ms", or the helper's own "Timed out
 * after N ms waiting for ...".
 */
export const TEST_TIMEOUT_SCALE = timeoutScale(process.env.TEST_TIMEOUT_SCALE);

function timeoutScale(configured: string | undefined): number {
  if (configured === undefined || configured === "") return 1;
  const scale = Number(configured);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`TEST_TIMEOUT_SCALE must be a positive number (e.g. 2), not "${configured}".`);
  return scale;
}

/** A time limit of `ms` at scale 1, at the run's `TEST_TIMEOUT_SCALE`. */
export const scaled = (ms: number): number => Math.round(ms * TEST_TIMEOUT_SCALE);

/** The integration suite's test timeout at scale 1 (vitest.config.ts scales it). */
export const INTEGRATION_TEST_TIMEOUT_MS = 30_000;

/**
 * `ms` at this suite's timeout, scaled to the timeout `actual` the running test has (a test's
 * own timeout, `--testTimeout`, the scale): a budget that grows with the time the test is given.
 */
export const scaledToTimeout = (ms: number, actual: number): number => Math.round((ms * actual) / INTEGRATION_TEST_TIMEOUT_MS);

/** Polls `check` every 100 ms until it holds; throws, saying what it waited for, after `timeoutMs` (scaled). */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = scaled(10_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
