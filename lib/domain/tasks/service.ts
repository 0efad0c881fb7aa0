import { currentTime } from "../../core/clock.js";
import { referenceDetail } from "../../core/errors.js";
import { randomUUID } from "node:crypto";
import { hasScope, requirePermission, type Principal } from "../../auth/permissions.js";
import { readAccount } from "../../db/admin-store.js";
import { readUser } from "../../db/auth-store.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { UserItem } from "../../db/service.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import type { TaskCreateBody, TaskUpdateBody } from "../../schemas/tasks.js";
import { canonicalTimeZone, listKeyOf, LAST_REMINDER_AT, parseReminderAt, scheduleOf } from "./deadlines.js";
import { RECORD_READ_SCOPES, resolveRecords, resolverOf, storedLink, withLiveRecords, type StoredRecordLink, type TaskRecordType } from "./records.js";
import { canTransition, isLiveReminder, type TaskStatus } from "./rules.js";
import { presentTask, visibleTask, type TaskRecord, type TaskResource } from "./views.js";
import { activeUser, activityOf, newReminder, persist, timestampAfter } from "./writes.js";
import { kindWords, withArticle } from "../../core/text.js";

/**
 * Tasks and reminders: spec part 2, sections 2.6, 3.6 and 4.6; architecture section 8. This
 * file reads a task and writes one (create, update); lists, stats and reconcile are in
 * `lists.ts`, the reminder inbox and its operations in `reminders.ts`, what every write builds
 * in `writes.ts`, and how a task is shown and who sees it in `views.ts`.
 *
 * Who sees a task: users with `tasks.manage_all` see every task of the account; others see
 * the tasks assigned to them or created by them (anything else is 404). Whoever sees a task
 * may change it (the key needs tasks:write); assigning it to another user needs
 * `tasks.assign`. Linking a record needs the read scope of its kind and access to it.
 */

export async function getTask(principal: Principal, taskId: string): Promise<TaskResource> {
  const [task] = await withLiveRecords(principal, [await visibleTask(principal, taskId)]);
  return presentTask(principal, task!);
}

// --- Inputs shared by create and update --------------------------------------------------------

/** The zone a `time_zone_mode` resolves to: the user's, else the account's, else UTC. */
async function zoneOfMode(principal: Principal, mode: "mine" | "assignee", assignee: UserItem | undefined): Promise<string> {
  const own = mode === "mine" ? principal.timeZone : assignee?.timeZone;
  const userZone = own ? canonicalTimeZone(own) : undefined;
  if (userZone) return userZone;
  const account = await readAccount(principal.accountId);
  return (account?.timeZone && canonicalTimeZone(account.timeZone)) || "UTC";
}

function reminderInstant(value: string, now: Date): string {
  const parsed = parseReminderAt(value, now);
  if (parsed.ok) return parsed.at;
  const problems = {
    past: { code: "not_in_future", message: "must be in the future." },
    late: { code: "too_large", message: `must be at most ${LAST_REMINDER_AT} (UTC).` },
    format: {
      code: "invalid_format",
      message: "must be an ISO 8601 timestamp with an explicit offset, e.g. 2026-11-23T09:00:00+01:00 or 2026-11-23T08:00:00Z.",
    },
  } as const;
  throw errors.validationFailed([{ param: "reminder_at", ...problems[parsed.reason] }]);
}

/** A record link from a request: read scope, then existence and access (else 422 on `record.id`). */
async function linkOf(principal: Principal, record: { type: TaskRecordType; id: string }): Promise<StoredRecordLink> {
  const scope = RECORD_READ_SCOPES[record.type];
  if (!hasScope(principal, scope)) throw errors.insufficientScope(scope);
  if (!resolverOf(record.type)) return storedLink(record.type, record.id, undefined);
  const found = await resolveRecords(principal, record.type, [record.id]);
  const snapshot = found.get(record.id);
  if (!snapshot)
    throw errors.validationFailed([referenceDetail("record.id", `is not ${withArticle(kindWords(record.type))} of this account that you can see.`)]);
  return storedLink(record.type, record.id, snapshot);
}

/** A stored link with a fresh snapshot of its record (whoever may see it: the snapshot is not the caller's view). */
async function refreshedLink(accountId: string, link: TaskRecord["record"]): Promise<StoredRecordLink | undefined> {
  if (!link) return undefined;
  const resolver = resolverOf(link.type);
  if (!resolver) return link as StoredRecordLink;
  const found = await resolver.read(accountId, [link.id]);
  return storedLink(link.type, link.id, found.get(link.id) ?? null);
}

function dueTimeDetail(): ValidationDetail {
  return { param: "due_time", code: "requires_due_date", message: "requires due_date." };
}

// --- Create --------------------------------------------------------------------------------

export async function createTask(principal: Principal, input: TaskCreateBody, completion: IdempotencyCompletion | undefined): Promise<TaskResource> {
  const now = currentTime();
  const assigneeId = input.assignee_user_id ?? principal.userId;
  if (assigneeId !== principal.userId) requirePermission(principal, "tasks.assign", "assignee_user_id");
  const details: ValidationDetail[] = [];
  const dueDate = input.due_date ?? null;
  const dueTime = input.due_time ?? null;
  if (dueTime !== null && dueDate === null) details.push(dueTimeDetail());
  if (details.length > 0) throw errors.validationFailed(details);
  const reminderAt = input.reminder_at ? reminderInstant(input.reminder_at, now) : undefined;
  const [assignee, link] = await Promise.all([activeUser(principal, assigneeId), input.record ? linkOf(principal, input.record) : undefined]);
  const timeZone = input.time_zone ?? (await zoneOfMode(principal, input.time_zone_mode ?? "mine", assignee));
  const { dueAt, overdueAt } = scheduleOf(dueDate, dueTime, timeZone);
  const taskId = randomUUID();
  const createdAt = now.toISOString();
  const task: TaskRecord = {
    accountId: principal.accountId,
    taskId,
    title: input.title,
    titleKey: input.title.toLowerCase(),
    description: input.description ?? undefined,
    status: "open",
    version: 1,
    rev: 1,
    timeZone,
    dueDate: dueDate ?? undefined,
    dueTime: dueTime ?? undefined,
    dueAt: dueAt ?? undefined,
    overdueAt: overdueAt ?? undefined,
    listKey: listKeyOf(overdueAt, taskId),
    creatorUserId: principal.userId,
    assigneeUserId: assignee.userId,
    assigneeName: assignee.name,
    assigneeActive: true,
    reminder: reminderAt ? newReminder(reminderAt, assignee.userId, undefined) : undefined,
    record: link as TaskRecord["record"],
    createdAt,
    modifiedAt: createdAt,
  };
  const fields = ["title", "assignee", "time_zone"];
  if (task.description !== undefined) fields.push("description");
  if (dueDate !== null) fields.push("due_date");
  if (dueTime !== null) fields.push("due_time");
  if (task.reminder) fields.push("reminder");
  if (link) fields.push("record");
  const resource = presentTask(principal, task, now);
  const activity = activityOf(task, "created", principal.userId, fields);
  await retrying("create task", async () => ((await persist(undefined, task, activity, { completion, body: resource })) === "ok" ? true : RETRY), undefined, [
    `tasks:${principal.accountId}`,
  ]);
  return resource;
}

// --- Update --------------------------------------------------------------------------------

/** The API names of the fields whose value differs between two states of a task. */
function changedFields(before: TaskRecord, after: TaskRecord): string[] {
  const fields: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (before.title !== after.title) fields.push("title");
  if (!same(before.description, after.description)) fields.push("description");
  if (before.status !== after.status) fields.push("status");
  if (before.assigneeUserId !== after.assigneeUserId) fields.push("assignee");
  if (!same(before.dueDate, after.dueDate)) fields.push("due_date");
  if (!same(before.dueTime, after.dueTime)) fields.push("due_time");
  if (before.timeZone !== after.timeZone) fields.push("time_zone");
  const reminderKey = (task: TaskRecord) =>
    task.reminder ? [task.reminder.id, task.reminder.generation, task.reminder.status, task.reminder.scheduledAt, task.reminder.recipientUserId] : null;
  if (!same(reminderKey(before), reminderKey(after))) fields.push("reminder");
  const recordKey = (task: TaskRecord) => (task.record ? [task.record.type, task.record.id] : null);
  if (!same(recordKey(before), recordKey(after))) fields.push("record");
  return fields;
}

function actionOf(before: TaskStatus, after: TaskStatus): string {
  if (before === after) return "updated";
  if (after === "open") return "reopened";
  return after;
}

/** Fields of an update other than `version` and `status`. */
const EDIT_FIELDS = ["title", "description", "assignee_user_id", "due_date", "due_time", "time_zone", "time_zone_mode", "reminder_at", "record"] as const;

export async function updateTask(
  principal: Principal,
  taskId: string,
  input: TaskUpdateBody,
  completion: IdempotencyCompletion | undefined,
): Promise<TaskResource> {
  // null clears a field to its default: the caller as assignee, the zone of the mode (`mine` by default).
  const assignTo = input.assignee_user_id === null ? principal.userId : input.assignee_user_id;
  const zoneMode = input.time_zone_mode ?? (input.time_zone === null || input.time_zone_mode === null ? "mine" : undefined);
  return retrying(
    "update task",
    async () => {
      const now = currentTime();
      const current = await visibleTask(principal, taskId);
      if (current.version !== input.version) throw errors.taskConflict(current.version);
      const status = input.status ?? current.status;
      if (!canTransition(current.status, status)) {
        throw errors.taskTransitionNotAllowed(
          `A ${current.status} task cannot become ${status}${current.status === "open" ? "" : "; reopen it (status open) first"}.`,
        );
      }
      if (assignTo !== undefined && assignTo !== current.assigneeUserId && assignTo !== principal.userId)
        requirePermission(principal, "tasks.assign", "assignee_user_id");

      const details: ValidationDetail[] = [];
      const dueDate = input.due_date !== undefined ? input.due_date : (current.dueDate ?? null);
      const dueTime = input.due_time !== undefined ? input.due_time : input.due_date === null ? null : (current.dueTime ?? null);
      if (dueTime !== null && dueDate === null) details.push(dueTimeDetail());
      if (details.length > 0) throw errors.validationFailed(details);
      const reminderAt = input.reminder_at ? reminderInstant(input.reminder_at, now) : input.reminder_at;

      const assigneeId = assignTo ?? current.assigneeUserId;
      const reassigned = assigneeId !== current.assigneeUserId;
      // Every write takes fresh snapshots of the assignee and the linked record.
      const [assignee, link] = await Promise.all([
        reassigned ? activeUser(principal, assigneeId) : readUser(principal.accountId, assigneeId),
        input.record ? linkOf(principal, input.record) : input.record === null ? undefined : refreshedLink(principal.accountId, current.record),
      ]);
      const timeZone = input.time_zone ?? (zoneMode ? await zoneOfMode(principal, zoneMode, assignee) : current.timeZone);
      const { dueAt, overdueAt } = scheduleOf(dueDate, dueTime, timeZone);

      const next: TaskRecord = {
        ...current,
        title: input.title ?? current.title,
        titleKey: (input.title ?? current.title).toLowerCase(),
        description: input.description === undefined ? current.description : (input.description ?? undefined),
        status,
        timeZone,
        dueDate: dueDate ?? undefined,
        dueTime: dueTime ?? undefined,
        dueAt: dueAt ?? undefined,
        overdueAt: overdueAt ?? undefined,
        listKey: listKeyOf(overdueAt, current.taskId),
        assigneeUserId: assigneeId,
        assigneeName: assignee?.name ?? current.assigneeName,
        assigneeActive: assignee ? assignee.status === "active" : false,
        record: link as TaskRecord["record"],
      };

      // The reminder: a new reminder_at is the next occurrence, null removes it; a live
      // reminder follows a reassignment (next occurrence, same time); closing the task ends it.
      let reminder = current.reminder;
      if (reminderAt === null) reminder = undefined;
      else if (reminderAt !== undefined) reminder = newReminder(reminderAt, assigneeId, reminder);
      else if (reminder && reassigned && isLiveReminder(reminder.status)) reminder = newReminder(reminder.scheduledAt, assigneeId, reminder);
      if (reminder && status !== "open" && current.status === "open" && isLiveReminder(reminder.status)) {
        reminder = { ...reminder, status: status === "completed" ? "completed" : "dismissed" };
      }
      next.reminder = reminder;
      if (status !== "completed") next.completedAt = undefined;

      const fields = changedFields(current, next);
      if (current.status !== "open" && status !== "open" && fields.length > 0) {
        const edited = EDIT_FIELDS.find((field) => input[field] !== undefined) ?? "status";
        throw errors.taskTransitionNotAllowed(`This task is ${current.status}: only a reopen (status open) can change it.`, edited);
      }
      if (fields.length === 0) return presentTask(principal, (await withLiveRecords(principal, [current]))[0]!, now);

      next.version = current.version + 1;
      next.rev = current.rev + 1;
      next.modifiedAt = timestampAfter(current.modifiedAt);
      if (status === "completed" && current.status !== "completed") next.completedAt = next.modifiedAt;
      const resource = presentTask(principal, next, now);
      const activity = activityOf(next, actionOf(current.status, status), principal.userId, fields);
      const written = await persist(current, next, activity, { completion, body: resource });
      return written === "ok" ? resource : RETRY;
    },
    undefined,
    [`task:${principal.accountId}:${taskId}`, `tasks:${principal.accountId}`],
  );
}
