import { describe, expect, it } from "vitest";
import { availableActions, canTransition, decideReminderOperation, shownReminderStatus, TASK_STATUSES } from "./rules.js";
import { tallyChanges, unreadCount } from "./tallies.js";

describe("offline: task state rules", () => {
  it("available actions by status, none without the write scope", () => {
    expect(availableActions("open", true)).toEqual(["edit", "complete", "cancel"]);
    expect(availableActions("completed", true)).toEqual(["reopen"]);
    expect(availableActions("cancelled", true)).toEqual(["reopen"]);
    for (const status of TASK_STATUSES) expect(availableActions(status, false)).toEqual([]);
  });

  it("transitions of section 3.6", () => {
    expect(canTransition("open", "completed")).toBe(true);
    expect(canTransition("open", "cancelled")).toBe(true);
    expect(canTransition("completed", "open")).toBe(true);
    expect(canTransition("cancelled", "open")).toBe(true);
    expect(canTransition("completed", "cancelled")).toBe(false);
    expect(canTransition("cancelled", "completed")).toBe(false);
    for (const status of TASK_STATUSES) expect(canTransition(status, status)).toBe(true);
  });

  it("a scheduled reminder shows delivered once due (computed on read)", () => {
    const now = new Date("2025-01-01T12:00:00Z");
    expect(shownReminderStatus("scheduled", "2025-01-01T12:00:00.001Z", now)).toBe("scheduled");
    expect(shownReminderStatus("scheduled", "2025-01-01T12:00:00.000Z", now)).toBe("delivered");
    expect(shownReminderStatus("read", "2025-01-01T11:00:00.000Z", now)).toBe("read");
    expect(shownReminderStatus("dismissed", "2025-01-01T11:00:00.000Z", now)).toBe("dismissed");
  });

  it("reminder operations by reminder and task state", () => {
    expect(decideReminderOperation("read", "delivered", "open")).toEqual({ ok: true, change: "read" });
    expect(decideReminderOperation("read", "read", "open")).toEqual({ ok: true, change: "none" });
    expect(decideReminderOperation("read", "scheduled", "open")).toMatchObject({ ok: false, code: "reminder_not_actionable" });
    expect(decideReminderOperation("read", "dismissed", "open")).toMatchObject({ ok: false, code: "reminder_not_actionable" });
    for (const shown of ["scheduled", "delivered", "read"] as const) {
      expect(decideReminderOperation("dismiss", shown, "open")).toEqual({ ok: true, change: "dismiss" });
      expect(decideReminderOperation("snooze", shown, "open")).toEqual({ ok: true, change: "snooze" });
      expect(decideReminderOperation("complete", shown, "open")).toEqual({ ok: true, change: "complete" });
      expect(decideReminderOperation("complete", shown, "cancelled")).toMatchObject({ ok: false, code: "task_transition_not_allowed" });
    }
    for (const shown of ["dismissed", "completed"] as const) {
      expect(decideReminderOperation("dismiss", shown, "open")).toMatchObject({ ok: false, code: "reminder_not_actionable" });
      // Completing an open task goes through whatever became of its reminder (spec part 2, 3.6).
      expect(decideReminderOperation("complete", shown, "open")).toEqual({ ok: true, change: "complete" });
      expect(decideReminderOperation("complete", shown, "completed")).toMatchObject({ ok: false, code: "task_transition_not_allowed" });
    }
    // Snooze in any task state (spec part 2, 3.6), whatever ended the reminder.
    for (const shown of ["scheduled", "delivered", "read", "dismissed", "completed"] as const) {
      for (const task of ["open", "completed", "cancelled"] as const)
        expect(decideReminderOperation("snooze", shown, task)).toEqual({ ok: true, change: "snooze" });
    }
  });
});

describe("offline: task tallies", () => {
  const open = { status: "open" as const, assigneeUserId: "u1", assigneeActive: true };
  const reminder = { id: "r1", status: "scheduled" as const, scheduledAt: "2025-01-01T00:00:00.000Z", recipientUserId: "u1" };

  it("a new task counts open for its assignee and the account, with its pending reminder", () => {
    const changes = tallyChanges(undefined, { ...open, reminder });
    expect(changes.account).toEqual({ open: 1 });
    expect([...changes.users]).toEqual([["u1", { counts: { open: 1 }, setPending: { id: "r1", at: reminder.scheduledAt } }]]);
  });

  it("an edit that moves nothing touches no tally", () => {
    const changes = tallyChanges({ ...open, reminder }, { ...open, reminder });
    expect(changes.account).toEqual({});
    expect(changes.users.size).toBe(0);
  });

  it("completing moves counts and ends the pending reminder", () => {
    const changes = tallyChanges({ ...open, reminder }, { ...open, status: "completed", reminder: { ...reminder, status: "completed" } });
    expect(changes.account).toEqual({ open: -1, completed: 1 });
    expect(changes.users.get("u1")).toEqual({ counts: { open: -1, completed: 1 }, removePending: "r1" });
  });

  it("reassigning moves the counts and the pending reminder between users (one operation per user)", () => {
    const changes = tallyChanges({ ...open, reminder }, { ...open, assigneeUserId: "u2", reminder: { ...reminder, recipientUserId: "u2" } });
    expect(changes.account).toEqual({});
    expect(changes.users.get("u1")).toEqual({ counts: { open: -1 }, removePending: "r1" });
    expect(changes.users.get("u2")).toEqual({ counts: { open: 1 }, setPending: { id: "r1", at: reminder.scheduledAt } });
  });

  it("a snooze for the same recipient overwrites its pending entry (one SET, never a REMOVE of the same path)", () => {
    const changes = tallyChanges(
      { ...open, reminder: { ...reminder, status: "read" } },
      { ...open, reminder: { ...reminder, scheduledAt: "2025-01-02T00:00:00.000Z" } },
    );
    expect(changes.users.get("u1")).toEqual({ counts: {}, setPending: { id: "r1", at: "2025-01-02T00:00:00.000Z" } });
    const resnoozed = tallyChanges({ ...open, reminder }, { ...open, reminder: { ...reminder, scheduledAt: "2025-01-02T00:00:00.000Z" } });
    expect(resnoozed.users.get("u1")).toEqual({ counts: {}, setPending: { id: "r1", at: "2025-01-02T00:00:00.000Z" } });
  });

  it("recovery counts follow the assignee's active state", () => {
    expect(tallyChanges(open, { ...open, assigneeActive: false }).account).toEqual({ recoveryOpen: 1 });
    expect(tallyChanges({ ...open, assigneeActive: false }, { ...open, assigneeActive: false, status: "cancelled" }).account).toEqual({
      open: -1,
      cancelled: 1,
      recoveryOpen: -1,
      recoveryCancelled: 1,
    });
  });

  it("unread = pending entries already due", () => {
    const now = new Date("2025-01-01T12:00:00Z");
    expect(unreadCount({ a: "2025-01-01T11:00:00.000Z", b: "2025-01-01T12:00:00.000Z", c: "2025-01-01T12:00:01.000Z" }, now)).toBe(2);
    expect(unreadCount(undefined, now)).toBe(0);
  });
});
