/**
 * The time the domain reads: ISO-8601 timestamps, epoch seconds (TTLs, rate windows) and the
 * instant reminders fall due against. The system clock, moved forward only by `advanceClock`:
 * a test that serves the API in its own process makes a reminder due without sleeping.
 */
let offsetMs = 0;

/** Now. */
export const currentTime = (): Date => new Date(Date.now() + offsetMs);

/** An instant of the system clock (epoch ms, e.g. when a request was received) on this clock. */
export const clockTimeOf = (systemMs: number): number => systemMs + offsetMs;

/** Now, as the ISO-8601 UTC timestamp records store (`createdAt`, `updatedAt`, ...). */
export const nowIso = (): string => currentTime().toISOString();

/** A later `updatedAt` than the stored one: now, or just after it (within one millisecond). */
export function laterUpdatedAt(previous: string): string {
  const now = nowIso();
  return now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();
}

/** Now, in whole epoch seconds (DynamoDB TTL attributes). */
export const epochSeconds = (): number => Math.floor((Date.now() + offsetMs) / 1000);

/**
 * Moves this process's clock `ms` forward (tests only: nothing in the API calls it). Never
 * back, so timestamps stay in order; `resetClock` returns to the system clock between tests.
 */
export function advanceClock(ms: number): void {
  if (!(ms >= 0)) throw new RangeError(`The clock moves forward only (${ms} ms).`);
  offsetMs += ms;
}

/** Back to the system clock. */
export function resetClock(): void {
  offsetMs = 0;
}
