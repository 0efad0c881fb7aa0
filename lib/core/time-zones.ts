import { IANAZone } from "luxon";

/** Time-zone names and local times as the API accepts them (tasks' `time_zone`, `due_time`). */

/**
 * A valid IANA zone name as stored: the name the client gave, with the casing of the zone
 * database when only the casing differs (`europe/london` -> `Europe/London`); links keep the
 * name given (`Asia/Kolkata` stays, although ICU calls it `Asia/Calcutta`). Undefined when not
 * a zone (offsets such as `+02:00` are not zones).
 */
export function canonicalTimeZone(zone: string): string | undefined {
  if (!zone || zone.length > 64 || !IANAZone.isValidZone(zone)) return undefined;
  try {
    const known = new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
    return known.toLowerCase() === zone.toLowerCase() ? known : zone;
  } catch {
    return undefined;
  }
}

/** A local time of day, `HH:mm` on the 24-hour clock (a task's `due_time`). */
export const DUE_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
