/**
 * The integration suite's test timeout (vitest.config.ts). A test that bounds how long
 * something may take scales its bound by the timeout the run actually has (`--testTimeout`,
 * a test's own timeout) over this one, so a slower machine that raises the timeout raises the
 * bounds with it.
 */
export const INTEGRATION_TEST_TIMEOUT_MS = 30_000;

/** `ms` at this suite's timeout, scaled to the timeout `actual` the running test has. */
export const scaledToTimeout = (ms: number, actual: number): number => Math.round((ms * actual) / INTEGRATION_TEST_TIMEOUT_MS);
