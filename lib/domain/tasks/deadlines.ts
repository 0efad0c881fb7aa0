import { DateTime } from "luxon";
import { localInstant, startOfLocalDay } from "../common/local-time.js";
import { canonicalTimeZone, dateInZone, DUE_TIME } from "../../core/time-zones.js";

export { canonicalTimeZone, DUE_TIME };

/**
 * Task schedules (spec part 2, sections 2.6 and 4.6): pure time arithmetic with real IANA
 * zones (luxon), no database.
 *
 * - A date-only deadline keeps its date and has no `due_at`; it becomes overdue at the start
 *   of the next local day in the task's zone (`overdue_at`). Its deadline (the list order) is
 *   that instant, the end of its local day.
 * - A timed deadline (`due_date` + `due_time` HH:mm, local to the task's zone) has `due_at`,
 *   the exact UTC instant; `overdue_at` = `due_at`.
 * - Daylight-saving changes: a local time that does not exist (the spring gap, e.g. 01:30 on
 *   the day London moves from 01:00 GMT to 02:00 BST) moves forward by the length of the gap
 *   (01:30 -> 02:30 BST = 01:30Z); a local time that happens twice (the autumn overlap) is
 *   the FIRST occurrence, the one still on summer time (London 01:30 on the last Sunday of
 *   October = 01:30 BST = 00:30Z). Both as RFC 5545 and Temporal's `compatible` resolve them.
 * - "Today", "overdue" and "current week" are judged in each task's own zone: a task is due
 *   today when its due date is today's date in its zone; the current week is Monday to
 *   Sunday around today's date in the task's zone.
 */

/** An ISO 8601 timestamp with an explicit offset (`Z` or `+hh:mm`, hours 00-23, minutes 00-59), seconds optional. */
export const OFFSET_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

const iso = (time: DateTime): string => time.toUTC().toISO()!;

export interface Schedule {
  dueAt: string | null;
  overdueAt: string | null;
}

/** `due_at` and `overdue_at` of a deadline (both null without a due date). */
export function scheduleOf(dueDate: string | null, dueTime: string | null, zone: string): Schedule {
  if (dueDate === null) return { dueAt: null, overdueAt: null };
  if (dueTime === null) {
    const nextDay = DateTime.fromISO(dueDate, { zone: "UTC" }).plus({ days: 1 }).toISODate()!;
    return { dueAt: null, overdueAt: iso(startOfLocalDay(nextDay, zone)) };
  }
  const dueAt = iso(localInstant(dueDate, dueTime, zone));
  return { dueAt, overdueAt: dueAt };
}

/** The sort key of a deadline: `overdue_at` (fixed-width UTC ISO), or `~` (after every date) when undated. */
export const UNDATED = "~";
export function deadlineKey(overdueAt: string | null): string {
  return overdueAt ?? UNDATED;
}

/** A list position: deadline, then task UUID. */
export function listKeyOf(overdueAt: string | null, taskId: string): string {
  return `${deadlineKey(overdueAt)}#${taskId}`;
}

/** Today's date in a zone. */
export function localToday(zone: string, now: Date): string {
  return dateInZone(zone, now);
}

/** Monday and Sunday of the week around today's date in a zone. */
export function currentWeek(zone: string, now: Date): { from: string; to: string } {
  const today = DateTime.fromJSDate(now, { zone }).startOf("day");
  const monday = today.minus({ days: today.weekday - 1 });
  return { from: monday.toISODate()!, to: monday.plus({ days: 6 }).toISODate()! };
}

export interface DatedTask {
  status: string;
  timeZone: string;
  dueDate?: string | null;
  overdueAt?: string | null;
}

export const isOverdue = (task: DatedTask, now: Date): boolean =>
  task.status === "open" && Boolean(task.overdueAt) && Date.parse(task.overdueAt!) <= now.getTime();

export const isDueToday = (task: DatedTask, now: Date): boolean =>
  task.status === "open" && Boolean(task.dueDate) && task.dueDate === localToday(task.timeZone, now);

export function isDueThisWeek(task: DatedTask, now: Date): boolean {
  if (task.status !== "open" || !task.dueDate) return false;
  const week = currentWeek(task.timeZone, now);
  return task.dueDate >= week.from && task.dueDate <= week.to;
}

/** Open tasks the caller's badge counts: due today in their zone, or overdue. */
export const countsForBadge = (task: DatedTask, now: Date): boolean => isOverdue(task, now) || isDueToday(task, now);

/**
 * Every open task that can be overdue, due today or due this week has its deadline before
 * this instant (the end of the current week in the easternmost zone is at most 7 days and
 * 14 hours away, plus one day for a date-only deadline): the upper bound of the stats read.
 */
export function statsWindowEnd(now: Date): string {
  return new Date(now.getTime() + 9 * 86_400_000).toISOString();
}

export type ReminderInstant = { ok: true; at: string } | { ok: false; reason: "format" | "past" | "late" };

/** The latest reminder instant: its UTC timestamp must keep a four-digit year. */
export const LAST_REMINDER_AT = "9999-12-31T23:59:59.999Z";

/** `reminder_at`: an ISO 8601 timestamp with an explicit offset, strictly in the future, at most `LAST_REMINDER_AT` (UTC ISO out). */
export function parseReminderAt(value: string, now: Date): ReminderInstant {
  if (!OFFSET_TIMESTAMP.test(value)) return { ok: false, reason: "format" };
  const parsed = DateTime.fromISO(value, { setZone: true });
  if (!parsed.isValid) return { ok: false, reason: "format" };
  if (parsed.toMillis() <= now.getTime()) return { ok: false, reason: "past" };
  if (parsed.toMillis() > Date.parse(LAST_REMINDER_AT)) return { ok: false, reason: "late" };
  return { ok: true, at: iso(parsed) };
}
