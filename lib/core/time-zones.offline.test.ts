import { DateTime, IANAZone } from "luxon";
import { describe, expect, it } from "vitest";
import { canonicalTimeZone, dateInZone, isValidZone } from "./time-zones.js";

/** `Intl`-read local dates and zone names agree with luxon's (the library the arithmetic uses). */
const ZONES = [
  "UTC",
  "Europe/London",
  "America/New_York",
  "America/St_Johns",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Australia/Lord_Howe",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "Pacific/Apia",
  "America/Santiago",
  "Etc/GMT+12",
  "Etc/GMT-14",
];

describe("dates in a zone", () => {
  it("reads the same local date as luxon at every half hour of a year's DST changes, in zones from -12 to +14", () => {
    const instants: Date[] = [];
    for (const start of [
      "2026-03-07T00:00:00Z",
      "2026-03-28T00:00:00Z",
      "2026-09-26T00:00:00Z",
      "2026-10-24T00:00:00Z",
      "2026-12-31T00:00:00Z",
      "2011-12-29T00:00:00Z",
    ]) {
      for (let step = 0; step < 4 * 48; step++) instants.push(new Date(Date.parse(start) + step * 30 * 60_000));
    }
    for (const zone of ZONES) {
      for (const now of instants) expect(dateInZone(zone, now), `${zone} at ${now.toISOString()}`).toBe(DateTime.fromJSDate(now, { zone }).toISODate());
    }
  });

  it("accepts exactly the zone names luxon accepts, and no UTC offset (which Node 22's Intl, and so luxon there, takes as a zone)", () => {
    for (const zone of [...ZONES, "europe/london", "Asia/Calcutta", "US/Eastern", "GMT+1", "Not/AZone", "", "Europe/Lond", "Mars/Olympus"]) {
      expect(isValidZone(zone), zone).toBe(IANAZone.isValidZone(zone));
    }
    for (const offset of ["+02:00", "-05", "+0530", "-12:00"]) expect(isValidZone(offset), offset).toBe(false);
    expect(isValidZone(undefined)).toBe(false);
    expect(isValidZone(null)).toBe(false);
    expect(canonicalTimeZone("europe/london")).toBe("Europe/London");
    expect(canonicalTimeZone("Not/AZone")).toBeUndefined();
  });
});
