import { describe, expect, it } from "vitest";
import {
  canonicalTimeZone,
  countsForBadge,
  currentWeek,
  isDueThisWeek,
  isOverdue,
  listKeyOf,
  parseReminderAt,
  scheduleOf,
  statsWindowEnd,
} from "./deadlines.js";
import { localInstant } from "../common/local-time.js";

describe("offline: task deadlines", () => {
  it("a date-only deadline has no due_at and is overdue from the start of the next local day (UTC out)", () => {
    expect(scheduleOf("2025-01-15", null, "Europe/London")).toEqual({ dueAt: null, overdueAt: "2025-01-16T00:00:00.000Z" });
    expect(scheduleOf("2025-07-15", null, "Europe/London")).toEqual({ dueAt: null, overdueAt: "2025-07-15T23:00:00.000Z" });
    expect(scheduleOf("2025-01-15", null, "America/New_York")).toEqual({ dueAt: null, overdueAt: "2025-01-16T05:00:00.000Z" });
    expect(scheduleOf("2025-01-15", null, "Asia/Tokyo")).toEqual({ dueAt: null, overdueAt: "2025-01-15T15:00:00.000Z" });
  });

  it("a date-only deadline whose next day starts across a daylight-saving change", () => {
    // London: 2025-03-30 starts in GMT, 2025-03-31 in BST; 2025-10-27 starts in GMT again.
    expect(scheduleOf("2025-03-29", null, "Europe/London").overdueAt).toBe("2025-03-30T00:00:00.000Z");
    expect(scheduleOf("2025-03-30", null, "Europe/London").overdueAt).toBe("2025-03-30T23:00:00.000Z");
    expect(scheduleOf("2025-10-26", null, "Europe/London").overdueAt).toBe("2025-10-27T00:00:00.000Z");
    // New York: 2025-03-09 (spring) and 2025-11-02 (autumn).
    expect(scheduleOf("2025-03-09", null, "America/New_York").overdueAt).toBe("2025-03-10T04:00:00.000Z");
    expect(scheduleOf("2025-11-02", null, "America/New_York").overdueAt).toBe("2025-11-03T05:00:00.000Z");
    // Santiago skips midnight (00:00 -> 01:00) on 2025-09-07: the day starts at 01:00 local.
    expect(scheduleOf("2025-09-06", null, "America/Santiago").overdueAt).toBe("2025-09-07T04:00:00.000Z");
    // Havana goes back from 01:00 to 00:00 on 2026-11-01: midnight happens twice, the day starts at the first (04:00Z).
    expect(scheduleOf("2026-10-31", null, "America/Havana").overdueAt).toBe("2026-11-01T04:00:00.000Z");
    expect(scheduleOf("2026-10-31", "00:00", "America/Havana").dueAt).toBe("2026-10-31T04:00:00.000Z");
  });

  it("a timed deadline is the exact UTC instant of the local time, on either side of the changes", () => {
    expect(scheduleOf("2025-03-29", "09:00", "Europe/London")).toEqual({ dueAt: "2025-03-29T09:00:00.000Z", overdueAt: "2025-03-29T09:00:00.000Z" });
    expect(scheduleOf("2025-03-31", "09:00", "Europe/London").dueAt).toBe("2025-03-31T08:00:00.000Z");
    expect(scheduleOf("2025-03-08", "09:00", "America/New_York").dueAt).toBe("2025-03-08T14:00:00.000Z");
    expect(scheduleOf("2025-03-10", "09:00", "America/New_York").dueAt).toBe("2025-03-10T13:00:00.000Z");
    expect(scheduleOf("2025-11-03", "09:00", "America/New_York").dueAt).toBe("2025-11-03T14:00:00.000Z");
  });

  it("a nonexistent local time (spring gap) moves forward by the gap", () => {
    // London 2025-03-30: 01:00 GMT -> 02:00 BST; 01:30 does not exist -> 02:30 BST = 01:30Z.
    expect(scheduleOf("2025-03-30", "01:30", "Europe/London").dueAt).toBe("2025-03-30T01:30:00.000Z");
    // New York 2025-03-09: 02:00 EST -> 03:00 EDT; 02:30 -> 03:30 EDT = 07:30Z.
    expect(scheduleOf("2025-03-09", "02:30", "America/New_York").dueAt).toBe("2025-03-09T07:30:00.000Z");
    expect(localInstant("2025-03-09", "02:00", "America/New_York").toUTC().toISO()).toBe("2025-03-09T07:00:00.000Z");
  });

  it("an ambiguous local time (autumn overlap) is its first occurrence (still summer time)", () => {
    // London 2025-10-26: 02:00 BST -> 01:00 GMT; 01:30 happens at 00:30Z and 01:30Z.
    expect(scheduleOf("2025-10-26", "01:30", "Europe/London").dueAt).toBe("2025-10-26T00:30:00.000Z");
    // New York 2025-11-02: 02:00 EDT -> 01:00 EST; 01:30 happens at 05:30Z and 06:30Z.
    expect(scheduleOf("2025-11-02", "01:30", "America/New_York").dueAt).toBe("2025-11-02T05:30:00.000Z");
    // Just outside the overlap, a single answer.
    expect(scheduleOf("2025-11-02", "00:59", "America/New_York").dueAt).toBe("2025-11-02T04:59:00.000Z");
    expect(scheduleOf("2025-11-02", "02:00", "America/New_York").dueAt).toBe("2025-11-02T07:00:00.000Z");
  });

  it("no due date: neither instant", () => {
    expect(scheduleOf(null, null, "UTC")).toEqual({ dueAt: null, overdueAt: null });
  });

  it("list keys order by deadline then UUID, undated last", () => {
    const keys = [
      listKeyOf(null, "00000000-0000-4000-8000-000000000001"),
      listKeyOf("2025-03-30T01:30:00.000Z", "00000000-0000-4000-8000-000000000002"),
      listKeyOf("2025-03-30T01:30:00.000Z", "00000000-0000-4000-8000-000000000001"),
      listKeyOf("2024-12-31T23:00:00.000Z", "ffffffff-0000-4000-8000-000000000001"),
    ].sort();
    expect(keys).toEqual([
      "2024-12-31T23:00:00.000Z#ffffffff-0000-4000-8000-000000000001",
      "2025-03-30T01:30:00.000Z#00000000-0000-4000-8000-000000000001",
      "2025-03-30T01:30:00.000Z#00000000-0000-4000-8000-000000000002",
      "~#00000000-0000-4000-8000-000000000001",
    ]);
  });

  it("canonical IANA zones; offsets and unknown names are refused", () => {
    expect(canonicalTimeZone("europe/london")).toBe("Europe/London");
    expect(canonicalTimeZone("America/New_York")).toBe("America/New_York");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("Asia/Kolkata")).toBe("Asia/Kolkata");
    expect(canonicalTimeZone("Europe/Kyiv")).toBe("Europe/Kyiv");
    expect(canonicalTimeZone("Mars/Olympus")).toBeUndefined();
    expect(canonicalTimeZone("+05:00")).toBeUndefined();
    expect(canonicalTimeZone("")).toBeUndefined();
  });

  it("today, overdue and the current week are judged in the task's own zone", () => {
    const now = new Date("2025-03-30T23:30:00Z"); // Monday 00:30 in London (BST), Sunday 19:30 in New York
    expect(currentWeek("Europe/London", now)).toEqual({ from: "2025-03-31", to: "2025-04-06" });
    expect(currentWeek("America/New_York", now)).toEqual({ from: "2025-03-24", to: "2025-03-30" });
    const london = { status: "open", timeZone: "Europe/London", dueDate: "2025-03-31", overdueAt: scheduleOf("2025-03-31", null, "Europe/London").overdueAt };
    const newYork = {
      status: "open",
      timeZone: "America/New_York",
      dueDate: "2025-03-30",
      overdueAt: scheduleOf("2025-03-30", null, "America/New_York").overdueAt,
    };
    expect(countsForBadge(london, now)).toBe(true); // due today in London
    expect(countsForBadge(newYork, now)).toBe(true); // due today in New York
    expect(isOverdue(newYork, now)).toBe(false);
    expect(isOverdue(newYork, new Date("2025-03-31T04:00:00Z"))).toBe(true);
    expect(isDueThisWeek(london, now)).toBe(true);
    expect(isDueThisWeek({ ...london, status: "completed" }, now)).toBe(false);
    const nextWeek = { status: "open", timeZone: "Europe/London", dueDate: "2025-04-07", overdueAt: "2025-04-07T23:00:00.000Z" };
    expect(isDueThisWeek(nextWeek, now)).toBe(false);
    expect(countsForBadge({ status: "open", timeZone: "UTC" }, now)).toBe(false);
  });

  it("the stats window covers the current week in every zone", () => {
    const now = new Date("2025-03-24T00:00:00Z");
    const end = statsWindowEnd(now);
    // The latest deadline of any task due this week: Sunday's date-only task in the westernmost zone.
    expect(scheduleOf("2025-03-30", null, "Pacific/Pago_Pago").overdueAt! < end).toBe(true);
    expect(scheduleOf(currentWeek("Pacific/Kiritimati", now).to, null, "Pacific/Kiritimati").overdueAt! < end).toBe(true);
  });

  it("reminder_at: explicit offset, strictly in the future, normalised to UTC", () => {
    const now = new Date("2025-01-01T00:00:00Z");
    expect(parseReminderAt("2025-01-01T09:00:00+01:00", now)).toEqual({ ok: true, at: "2025-01-01T08:00:00.000Z" });
    expect(parseReminderAt("2025-01-01T00:00:01Z", now)).toEqual({ ok: true, at: "2025-01-01T00:00:01.000Z" });
    expect(parseReminderAt("2025-01-01T00:30-05:00", now)).toEqual({ ok: true, at: "2025-01-01T05:30:00.000Z" });
    expect(parseReminderAt("2025-01-01T09:00:00", now)).toEqual({ ok: false, reason: "format" });
    expect(parseReminderAt("2025-01-01", now)).toEqual({ ok: false, reason: "format" });
    for (const offset of ["+99:00", "+24:00", "-30:00", "+05:99", "+05:60"]) {
      expect(parseReminderAt(`2027-01-10T00:00:00${offset}`, now), offset).toEqual({ ok: false, reason: "format" });
    }
    expect(parseReminderAt("2027-01-10T00:00:00+23:59", now)).toEqual({ ok: true, at: "2027-01-09T00:01:00.000Z" });
    expect(parseReminderAt("2027-01-10T00:00:00-12:00", now)).toEqual({ ok: true, at: "2027-01-10T12:00:00.000Z" });
    expect(parseReminderAt("2025-02-30T09:00:00Z", now)).toEqual({ ok: false, reason: "format" });
    expect(parseReminderAt("2025-01-01T00:00:00Z", now)).toEqual({ ok: false, reason: "past" });
    expect(parseReminderAt("2024-12-31T23:59:59+00:00", now)).toEqual({ ok: false, reason: "past" });
    // The UTC instant must keep a four-digit year.
    expect(parseReminderAt("9999-12-31T23:59:59Z", now)).toEqual({ ok: true, at: "9999-12-31T23:59:59.000Z" });
    expect(parseReminderAt("9999-12-31T23:59:59-01:00", now)).toEqual({ ok: false, reason: "late" });
  });
});
