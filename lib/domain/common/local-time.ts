import { DateTime, IANAZone } from "luxon";

/**
 * Local wall-clock times in real IANA zones (luxon), shared by task deadlines and estimate
 * expiry: a time that does not exist moves forward by the gap, one that happens twice is its
 * first occurrence (as RFC 5545 and Temporal's `compatible` resolve them).
 */
const WALL = "yyyy-MM-dd'T'HH:mm";

/**
 * The instant of a local wall-clock time in a zone: a nonexistent time moves forward by the
 * gap, an ambiguous one is its first (earlier) occurrence.
 */
export function localInstant(date: string, time: string, zone: string): DateTime {
  const wall = `${date}T${time}`;
  const wallAsUtc = DateTime.fromISO(wall, { zone: "UTC" }).toMillis();
  const ianaZone = IANAZone.create(zone);
  const offsets = new Set([-1, 0, 1].map((days) => ianaZone.offset(wallAsUtc + days * 86_400_000)));
  const candidates = [...offsets]
    .map((offset) => wallAsUtc - offset * 60_000)
    .filter((millis) => DateTime.fromMillis(millis, { zone }).toFormat(WALL) === wall)
    .sort((a, b) => a - b);
  if (candidates.length > 0) return DateTime.fromMillis(candidates[0]!, { zone });
  // In a gap: luxon keeps the wall-clock offset from before the change, i.e. moves forward.
  return DateTime.fromISO(wall, { zone });
}

/**
 * The start of a local day in a zone: midnight, its first occurrence when it happens twice
 * (Havana's clocks go back from 01:00 to 00:00), or the day's first instant when it does not
 * exist (Santiago's go forward from 00:00 to 01:00).
 */
export function startOfLocalDay(date: string, zone: string): DateTime {
  return localInstant(date, "00:00", zone);
}
