import { nowIso } from "../../core/clock.js";
import { referenceDetail } from "../../core/errors.js";
import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/permissions.js";
import { readUser } from "../../db/auth-store.js";
import { addReferencingOp } from "../../db/references.js";
import type { TaskActivityItem, TaskItem, TaskReminderItem, UserItem } from "../../db/service.js";
import { activeUserCheck, versionKey, writeTask } from "../../db/tasks.js";
import { errors } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import { kindWords, withArticle } from "../../core/text.js";
import { resolverOf } from "./records.js";
import { tallyChanges, type TallyState } from "./tallies.js";
import type { TaskRecord } from "./views.js";

/**
 * What every task write builds and commits (create, update, reminder operations): the new
 * reminder, the inbox item and the activity event of a task state, the tallies it moves, and
 * `persist`, which writes it all in one transaction.
 */

type StoredReminder = NonNullable<TaskItem["reminder"]>;

const ASSIGNEE_MESSAGE = "must be an active user of this account.";

/** The assignee's live user record (active), or 422 on `assignee_user_id`. */
export async function activeUser(principal: Principal, userId: string): Promise<UserItem> {
  const user = await readUser(principal.accountId, userId);
  if (user?.status !== "active") throw errors.validationFailed([referenceDetail("assignee_user_id", ASSIGNEE_MESSAGE)]);
  return user;
}

export function newReminder(at: string, recipientUserId: string, previous: StoredReminder | undefined): StoredReminder {
  return {
    id: previous?.id ?? randomUUID(),
    generation: (previous?.generation ?? 0) + 1,
    status: "scheduled",
    scheduledAt: at,
    recipientUserId,
  };
}

const tallyState = (task: TaskRecord | undefined): TallyState | undefined =>
  task && {
    status: task.status,
    assigneeUserId: task.assigneeUserId,
    assigneeActive: task.assigneeActive,
    reminder: task.reminder && {
      id: task.reminder.id,
      status: task.reminder.status,
      scheduledAt: task.reminder.scheduledAt,
      recipientUserId: task.reminder.recipientUserId,
    },
  };

/** The inbox item of a task's reminder, carrying the task summary the inbox shows. */
export function reminderItem(task: TaskRecord): TaskReminderItem | undefined {
  const reminder = task.reminder;
  if (!reminder) return undefined;
  return {
    accountId: task.accountId,
    reminderId: reminder.id,
    taskId: task.taskId,
    recipientUserId: reminder.recipientUserId,
    generation: reminder.generation,
    status: reminder.status,
    scheduledAt: reminder.scheduledAt,
    readAt: reminder.readAt,
    inboxKey: `${reminder.scheduledAt}#${reminder.id}`,
    taskTitle: task.title,
    taskStatus: task.status,
    taskVersion: task.version,
    taskDueDate: task.dueDate,
    taskDueTime: task.dueTime,
    taskDueAt: task.dueAt,
    taskTimeZone: task.timeZone,
  };
}

export function activityOf(task: TaskRecord, action: string, actorUserId: string, changedFields: string[]): TaskActivityItem {
  return {
    accountId: task.accountId,
    taskId: task.taskId,
    version: task.version,
    versionKey: versionKey(task.version),
    action,
    actorUserId,
    changedFields,
    at: task.modifiedAt,
  };
}

/**
 * Writes a change of a task with everything that moves with it; "task changed" when it lost a
 * race. A newly chosen assignee must still be active, and a newly linked record must still
 * exist, when the write commits (else 422 on the field).
 */
export async function persist(
  before: TaskRecord | undefined,
  after: TaskRecord,
  activity: TaskActivityItem | undefined,
  outcome: { completion: IdempotencyCompletion | undefined; body: unknown } | undefined,
): Promise<"ok" | "task changed"> {
  const { users, account } = tallyChanges(tallyState(before), tallyState(after));
  const removeReminder = before?.reminder && before.reminder.id !== after.reminder?.id ? before.reminder.id : undefined;
  const newAssignee = !before || before.assigneeUserId !== after.assigneeUserId;
  const link = after.record;
  const newLink = link && link.state === "resolved" && (!before?.record || before.record.type !== link.type || before.record.id !== link.id);
  const guards = (tx: Parameters<NonNullable<Parameters<typeof writeTask>[0]["guards"]>>[0]) => {
    if (newAssignee) addReferencingOp(tx, "assignee_user_id", activeUserCheck(tx, after.accountId, after.assigneeUserId), ASSIGNEE_MESSAGE);
    const check = newLink ? resolverOf(link.type)?.existsCheck : undefined;
    if (check)
      addReferencingOp(tx, "record.id", check(tx, after.accountId, link!.id), `is not ${withArticle(kindWords(link!.type))} of this account that you can see.`);
  };
  const result = await writeTask({ before, after, activity, reminder: reminderItem(after), removeReminder, users, account, guards }, outcome);
  if (Array.isArray(result)) throw errors.validationFailed(result);
  return result;
}

/** A timestamp after `previous` (clocks of different writers may disagree by a millisecond). */
export function timestampAfter(previous: string | undefined): string {
  const now = nowIso();
  if (!previous || now > previous) return now;
  return new Date(Date.parse(previous) + 1).toISOString();
}
