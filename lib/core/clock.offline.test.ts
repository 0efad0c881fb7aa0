import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, currentTime, epochSeconds, nowIso, resetClock } from "./clock.js";

describe("offline: the clock", () => {
  afterEach(() => resetClock());

  it("is the system clock until a test moves it forward; timestamps and epoch seconds move with it", () => {
    const system = Date.now();
    expect(Math.abs(currentTime().getTime() - system)).toBeLessThan(1_000);
    advanceClock(3_600_000);
    expect(currentTime().getTime() - Date.now()).toBeGreaterThanOrEqual(3_599_000);
    expect(Date.parse(nowIso()) - Date.now()).toBeGreaterThanOrEqual(3_599_000);
    expect(epochSeconds() - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(3_599);
    resetClock();
    expect(Math.abs(currentTime().getTime() - Date.now())).toBeLessThan(1_000);
  });

  it("never moves back", () => {
    expect(() => advanceClock(-1)).toThrow(RangeError);
    expect(() => advanceClock(Number.NaN)).toThrow(RangeError);
  });
});
