/**
 * Time-zone names, local dates and local times as the API accepts them (tasks' `time_zone`,
 * `due_time`; a document's "today"). Zone names and today's local date come from the
 * platform's IANA zone database through `Intl`, as luxon reads them too; arithmetic on local
 * times (a task's `due_at`, an estimate's expiry instant) is luxon's, in the modules that do
 * it. Keeping luxon out of this module keeps it out of every bundle that only needs "today"
 * (documents, admin): about 70 KB less to parse at a cold start.
 */

/** An IANA zone name begins with a letter (`UTC`, `Europe/Paris`, `Etc/GMT+2`). */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/**
 * Whether `zone` names an IANA zone the platform knows. Node 22's `Intl` also takes UTC offsets
 * (`+02:00`) as zones, which are not zone names (and luxon's `IANAZone.isValidZone` takes them
 * there too): the name's shape is checked first.
 */
export function isValidZone(zone: string | null | undefined): zone is string {
  if (!zone || !ZONE_NAME.test(zone)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone }).format();
    return true;
  } catch {
    return false;
  }
}

/** One formatter per zone (building one costs far more than using it); at most a few hundred zones exist. */
const DAY_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** The calendar date (YYYY-MM-DD) at the instant `now` in a valid IANA `zone`. */
export function dateInZone(zone: string, now: Date): string {
  let format = DAY_FORMATS.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      calendar: "iso8601",
      numberingSystem: "latn",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    if (DAY_FORMATS.size < 1000) DAY_FORMATS.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(now).map((part) => [part.type, part.value]));
  return `${String(parts.year).padStart(4, "0")}-${parts.month}-${parts.day}`;
}

/**
 * A valid IANA zone name as stored: the name the client gave, with the casing of the zone
 * database when only the casing differs (`europe/london` -> `Europe/London`); links keep the
 * name given (`Asia/Kolkata` stays, although ICU calls it `Asia/Calcutta`). Undefined when not
 * a zone (offsets such as `+02:00` are not zones).
 */
export function canonicalTimeZone(zone: string): string | undefined {
  if (!zone || zone.length > 64 || !isValidZone(zone)) return undefined;
  try {
    const known = new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
    return known.toLowerCase() === zone.toLowerCase() ? known : zone;
  } catch {
    return undefined;
  }
}

/** A local time of day, `HH:mm` on the 24-hour clock (a task's `due_time`). */
export const DUE_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
