import { currentTime } from "../../core/clock.js";
import type { Principal } from "../../auth/permissions.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { TaskActivityItem, TaskReminderItem } from "../../db/service.js";
import { queryInbox, readReminder, readTask, readUserTally } from "../../db/tasks.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import type { ReminderActionBody } from "../../schemas/tasks.js";
import { INBOX_PAGE } from "../../schemas/tasks.js";
import { cursorPosition, encodeTaskCursor, filterFingerprint, taskCursorKey } from "./cursor.js";
import { decideReminderOperation, shownReminderStatus, type ReminderOperation, type TaskStatus } from "./rules.js";
import { unreadCount } from "./tallies.js";
import { orNull, type TaskRecord } from "./views.js";
import { activityOf, newReminder, persist, reminderItem, timestampAfter } from "./writes.js";

/**
 * Reminders (spec part 2, section 4.6): the caller's inbox and the operations its recipient
 * may apply to a reminder (read, dismiss, snooze, complete).
 */

export function presentReminderEntry(reminder: TaskReminderItem, now: Date = currentTime()) {
  return {
    id: reminder.reminderId,
    object: "task_reminder" as const,
    generation: reminder.generation,
    status: shownReminderStatus(reminder.status, reminder.scheduledAt, now),
    scheduled_at: reminder.scheduledAt,
    read_at: orNull(reminder.readAt),
    task: {
      id: reminder.taskId,
      title: reminder.taskTitle,
      status: reminder.taskStatus as TaskStatus,
      version: reminder.taskVersion,
      due_date: orNull(reminder.taskDueDate),
      due_time: orNull(reminder.taskDueTime),
      due_at: orNull(reminder.taskDueAt),
      time_zone: reminder.taskTimeZone,
    },
  };
}

/** The caller's inbox: its own delivered reminders (read or not), newest first; reading it marks nothing. */
export async function listReminders(principal: Principal, cursor: string | undefined) {
  const key = await taskCursorKey();
  const expected = { k: "inbox" as const, a: principal.accountId, u: principal.userId, f: filterFingerprint({}) };
  let before: string | undefined;
  if (cursor !== undefined) {
    before = cursorPosition(cursor, key, expected);
    if (before === undefined) throw errors.invalidCursor();
  }
  const now = currentTime();
  const [entries, tally] = await Promise.all([
    queryInbox(principal.accountId, principal.userId, `${now.toISOString()}#~`, before, INBOX_PAGE),
    readUserTally(principal.accountId, principal.userId),
  ]);
  const shown = entries.slice(0, INBOX_PAGE);
  return {
    object: "list" as const,
    data: shown.map((entry) => presentReminderEntry(entry, now)),
    unread_count: unreadCount(tally?.pending as Record<string, unknown> | undefined, now),
    next_cursor: entries.length > INBOX_PAGE ? encodeTaskCursor({ ...expected, p: shown[shown.length - 1]!.inboxKey }, key) : null,
  };
}

function checkReminderBody(operation: ReminderOperation, body: ReminderActionBody): void {
  const details: ValidationDetail[] = [];
  const refuse = (param: "version" | "minutes") => details.push({ param, code: "not_allowed", message: `is not accepted by ${operation}.` });
  const need = (param: "version" | "minutes") => details.push({ param, code: "required", message: `is required by ${operation}.` });
  if (operation === "read" || operation === "dismiss") {
    if (body.version !== undefined) refuse("version");
    if (body.minutes !== undefined) refuse("minutes");
  } else {
    if (body.version === undefined) need("version");
    if (operation === "snooze" && body.minutes === undefined) need("minutes");
    if (operation === "complete" && body.minutes !== undefined) refuse("minutes");
  }
  if (details.length > 0) throw errors.validationFailed(details);
}

/**
 * A reminder operation by its recipient (anyone else: 404, as for a reminder that does not
 * exist). read and dismiss change the reminder only (the task's version stays); snooze (a new
 * generation `minutes` from now, the due date kept) and complete (the task completes) need the
 * task's current version and change the task.
 */
export async function actOnReminder(
  principal: Principal,
  reminderId: string,
  operation: ReminderOperation,
  body: ReminderActionBody,
  completion: IdempotencyCompletion | undefined,
) {
  checkReminderBody(operation, body);
  return retrying(
    `reminder ${operation}`,
    async () => {
      const now = currentTime();
      const stored = await readReminder(principal.accountId, reminderId);
      if (!stored || stored.recipientUserId !== principal.userId) throw errors.resourceMissing("reminder", reminderId);
      const current = await readTask(principal.accountId, stored.taskId);
      const reminder = current?.reminder;
      if (!current || !reminder || reminder.id !== reminderId || reminder.recipientUserId !== principal.userId) {
        throw errors.resourceMissing("reminder", reminderId);
      }
      if (body.version !== undefined && body.version !== current.version) throw errors.taskConflict(current.version);
      const decision = decideReminderOperation(operation, shownReminderStatus(reminder.status, reminder.scheduledAt, now), current.status);
      if (!decision.ok) {
        throw decision.code === "task_transition_not_allowed"
          ? errors.taskTransitionNotAllowed(decision.message)
          : errors.reminderNotActionable(decision.message);
      }
      if (decision.change === "none") return presentReminderEntry(reminderItem(current)!, now);

      const next: TaskRecord = { ...current, rev: current.rev + 1 };
      let activity: TaskActivityItem | undefined;
      switch (decision.change) {
        case "read":
          next.reminder = { ...reminder, status: "read", readAt: now.toISOString() };
          break;
        case "dismiss":
          next.reminder = { ...reminder, status: "dismissed" };
          break;
        case "snooze":
        case "complete": {
          next.version = current.version + 1;
          next.modifiedAt = timestampAfter(current.modifiedAt);
          if (decision.change === "snooze") {
            next.reminder = newReminder(new Date(now.getTime() + body.minutes! * 60_000).toISOString(), reminder.recipientUserId, reminder);
            activity = activityOf(next, "reminder_snoozed", principal.userId, ["reminder"]);
          } else {
            next.status = "completed";
            next.completedAt = next.modifiedAt;
            next.reminder = { ...reminder, status: "completed" };
            activity = activityOf(next, "completed", principal.userId, ["status", "reminder"]);
          }
          break;
        }
      }
      const entry = presentReminderEntry(reminderItem(next)!, now);
      const written = await persist(current, next, activity, { completion, body: entry });
      return written === "ok" ? entry : RETRY;
    },
    undefined,
    [`taskreminder:${principal.accountId}:${reminderId}`, `tasks:${principal.accountId}`],
  );
}
