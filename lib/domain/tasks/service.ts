import { randomUUID } from "node:crypto";
import { hasPermission, hasScope, requirePermission, type Principal } from "../../auth/permissions.js";
import { readAccount, readUsersOfAccount } from "../../db/admin-store.js";
import { readUser } from "../../db/auth-store.js";
import { addReferencingOp, referenceDetail } from "../../db/references.js";
import { RETRY, retrying } from "../../db/retry.js";
import type { TaskActivityItem, TaskItem, TaskReminderItem, UserItem } from "../../db/service.js";
import {
  hasFilter,
  queryActivity,
  queryInbox,
  queryRecordTasks,
  queryStatsWindow,
  queryTaskPage,
  readReminder,
  readTask,
  readTasks,
  readUserTally,
  activeUserCheck,
  versionKey,
  writeTask,
  type TaskFilter,
  type TaskPartition,
} from "../../db/tasks.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { IdempotencyCompletion } from "../../core/idempotency.js";
import type { ReconcileBody, ReminderActionBody, TaskCreateBody, TaskUpdateBody } from "../../schemas/tasks.js";
import { ACTIVITY_PAGE, DEFAULT_TASK_LIMIT, INBOX_PAGE } from "../../schemas/tasks.js";
import { cursorPosition, encodeTaskCursor, filterFingerprint, taskCursorKey } from "./cursor.js";
import { canonicalTimeZone, countsForBadge, isDueThisWeek, isOverdue, listKeyOf, parseReminderAt, scheduleOf, statsWindowEnd } from "./deadlines.js";
import {
  presentRecord,
  RECORD_READ_SCOPES,
  resolveRecords,
  resolverOf,
  storedLink,
  withLiveRecords,
  type StoredRecordLink,
  type TaskRecordType,
} from "./records.js";
import {
  availableActions,
  canTransition,
  decideReminderOperation,
  isLiveReminder,
  shownReminderStatus,
  type ReminderOperation,
  type TaskStatus,
} from "./rules.js";
import { tallyChanges, unreadCount, type TallyState } from "./tallies.js";
import { kindWords, withArticle } from "../../core/text.js";

/**
 * Tasks and reminders: spec part 2, sections 2.6, 3.6 and 4.6; architecture section 8.
 *
 * Who sees a task: users with `tasks.manage_all` see every task of the account; others see
 * the tasks assigned to them or created by them (anything else is 404). Whoever sees a task
 * may change it (the key needs tasks:write); assigning it to another user needs
 * `tasks.assign`. Linking a record needs the read scope of its kind and access to it.
 */
type TaskRecord = { -readonly [K in keyof TaskItem]: TaskItem[K] };
type StoredReminder = NonNullable<TaskItem["reminder"]>;

export interface TaskResource {
  id: string;
  object: "task";
  title: string;
  description: string | null;
  status: TaskStatus;
  version: number;
  time_zone: string;
  due_date: string | null;
  due_time: string | null;
  due_at: string | null;
  overdue_at: string | null;
  created: string;
  modified: string;
  completed_at: string | null;
  assignee: { id: string; name: string; photo_url: string | null; active: boolean };
  reminder: { id: string; generation: number; status: string; scheduled_at: string; read_at: string | null } | null;
  record: ReturnType<typeof presentRecord>;
  available_actions: string[];
}

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export function canSeeTask(principal: Principal, task: Pick<TaskRecord, "assigneeUserId" | "creatorUserId">): boolean {
  return hasPermission(principal, "tasks.manage_all") || task.assigneeUserId === principal.userId || task.creatorUserId === principal.userId;
}

export function presentTask(principal: Principal, task: TaskRecord, now: Date = new Date()): TaskResource {
  const reminder = task.reminder;
  return {
    id: task.taskId,
    object: "task",
    title: task.title,
    description: orNull(task.description),
    status: task.status,
    version: task.version,
    time_zone: task.timeZone,
    due_date: orNull(task.dueDate),
    due_time: orNull(task.dueTime),
    due_at: orNull(task.dueAt),
    overdue_at: orNull(task.overdueAt),
    created: task.createdAt,
    modified: task.modifiedAt,
    completed_at: orNull(task.completedAt),
    assignee: { id: task.assigneeUserId, name: task.assigneeName, photo_url: null, active: task.assigneeActive },
    reminder: reminder
      ? {
          id: reminder.id,
          generation: reminder.generation,
          status: shownReminderStatus(reminder.status, reminder.scheduledAt, now),
          scheduled_at: reminder.scheduledAt,
          read_at: orNull(reminder.readAt),
        }
      : null,
    record: presentRecord(principal, task.record as StoredRecordLink | undefined),
    available_actions: availableActions(task.status, hasScope(principal, "tasks:write")),
  };
}

async function visibleTask(principal: Principal, taskId: string): Promise<TaskRecord> {
  const task = await readTask(principal.accountId, taskId);
  if (!task || !canSeeTask(principal, task)) throw errors.resourceMissing("task", taskId);
  return task;
}

export async function getTask(principal: Principal, taskId: string): Promise<TaskResource> {
  const [task] = await withLiveRecords(principal, [await visibleTask(principal, taskId)]);
  return presentTask(principal, task!);
}

// --- Inputs shared by create and update --------------------------------------------------------

const ASSIGNEE_MESSAGE = "must be an active user of this account.";

/** The assignee's live user record (active), or 422 on `assignee_user_id`. */
async function activeUser(principal: Principal, userId: string): Promise<UserItem> {
  const user = await readUser(principal.accountId, userId);
  if (user?.status !== "active") throw errors.validationFailed([referenceDetail("assignee_user_id", ASSIGNEE_MESSAGE)]);
  return user;
}

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
  throw errors.validationFailed([
    {
      param: "reminder_at",
      code: parsed.reason === "past" ? "not_in_future" : "invalid_format",
      message:
        parsed.reason === "past"
          ? "must be in the future."
          : "must be an ISO 8601 timestamp with an explicit offset, e.g. 2026-11-23T09:00:00+01:00 or 2026-11-23T08:00:00Z.",
    },
  ]);
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

function newReminder(at: string, recipientUserId: string, previous: StoredReminder | undefined): StoredReminder {
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
function reminderItem(task: TaskRecord): TaskReminderItem | undefined {
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

function activityOf(task: TaskRecord, action: string, actorUserId: string, changedFields: string[]): TaskActivityItem {
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
async function persist(
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
function timestampAfter(previous: string | undefined): string {
  const now = new Date().toISOString();
  if (!previous || now > previous) return now;
  return new Date(Date.parse(previous) + 1).toISOString();
}

// --- Create --------------------------------------------------------------------------------

export async function createTask(principal: Principal, input: TaskCreateBody, completion: IdempotencyCompletion | undefined): Promise<TaskResource> {
  const now = new Date();
  const assigneeId = input.assignee_user_id ?? principal.userId;
  if (assigneeId !== principal.userId) requirePermission(principal, "tasks.assign");
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
  const assignTo = input.assignee_user_id;
  return retrying(
    "update task",
    async () => {
      const now = new Date();
      const current = await visibleTask(principal, taskId);
      if (current.version !== input.version) throw errors.taskConflict(current.version);
      const status = input.status ?? current.status;
      if (!canTransition(current.status, status)) {
        throw errors.taskTransitionNotAllowed(
          `A ${current.status} task cannot become ${status}${current.status === "open" ? "" : "; reopen it (status open) first"}.`,
        );
      }
      if (assignTo !== undefined && assignTo !== current.assigneeUserId && assignTo !== principal.userId) requirePermission(principal, "tasks.assign");

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
      const timeZone = input.time_zone ?? (input.time_zone_mode ? await zoneOfMode(principal, input.time_zone_mode, assignee) : current.timeZone);
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

// --- Lists -------------------------------------------------------------------------------------

export interface TaskListQuery {
  status?: TaskStatus;
  scope?: "mine" | "all" | "recovery";
  assignee?: string;
  q?: string;
  record_type?: TaskRecordType;
  record_id?: string;
  due_from?: string;
  due_to?: string;
  limit?: string;
  cursor?: string;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TASK_LIMIT;
  const limit = Number.parseInt(value, 10);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw errors.invalidQueryParameter("limit", "limit must be an integer from 1 to 100.");
  return limit;
}

/** A record filter: both or neither, with the read scope of the kind and access to the record. */
async function checkRecordFilter(
  principal: Principal,
  type: TaskRecordType | undefined,
  id: string | undefined,
): Promise<{ type: TaskRecordType; id: string } | undefined> {
  if (type === undefined && id === undefined) return undefined;
  if (type === undefined) throw errors.invalidQueryParameter("record_type", "record_id must come with record_type.");
  if (id === undefined) throw errors.invalidQueryParameter("record_id", "record_type must come with record_id.");
  const scope = RECORD_READ_SCOPES[type];
  if (!hasScope(principal, scope)) throw errors.insufficientScope(scope);
  const visible = await resolveRecords(principal, type, [id]);
  if (!visible.has(id)) throw errors.invalidQueryParameter("record_id", `record_id must name ${withArticle(kindWords(type))} you can see.`);
  return { type, id };
}

function requireScopePermission(scope: "mine" | "all" | "recovery"): (principal: Principal) => void {
  return (principal) => {
    if (scope !== "mine" && !hasPermission(principal, "tasks.manage_all")) {
      throw errors.permissionDenied(`scope=${scope} requires the tasks.manage_all permission.`);
    }
  };
}

export async function listTasks(principal: Principal, query: TaskListQuery): Promise<{ object: "list"; data: TaskResource[]; next_cursor: string | null }> {
  const status = query.status ?? "open";
  const scope = query.scope ?? "mine";
  requireScopePermission(scope)(principal);
  const limit = parseLimit(query.limit);
  if (query.due_from && query.due_to && query.due_from > query.due_to) throw errors.invalidQueryParameter("due_to", "due_to must not be before due_from.");
  const needle = query.q?.trim().toLowerCase() || undefined;
  const fingerprint = filterFingerprint({
    status,
    scope,
    assignee: query.assignee ?? null,
    q: needle ?? null,
    record_type: query.record_type ?? null,
    record_id: query.record_id ?? null,
    due_from: query.due_from ?? null,
    due_to: query.due_to ?? null,
  });
  const key = await taskCursorKey();
  const expected = { k: "tasks" as const, a: principal.accountId, u: principal.userId, f: fingerprint };
  let after: string | undefined;
  if (query.cursor !== undefined) {
    after = cursorPosition(query.cursor, key, expected);
    if (after === undefined) throw errors.invalidCursor();
  }
  const record = await checkRecordFilter(principal, query.record_type, query.record_id);

  const filter: TaskFilter = { titleContains: needle, dueFrom: query.due_from, dueTo: query.due_to };
  let partition: TaskPartition;
  const { accountId } = principal;
  if (scope === "mine" && query.assignee !== undefined && query.assignee !== principal.userId) {
    return { object: "list", data: [], next_cursor: null }; // tasks assigned to me AND to someone else
  }
  if (record) {
    partition = { kind: "record", accountId, recordType: record.type, recordId: record.id, status };
    if (scope === "mine") filter.assigneeUserId = principal.userId;
    else if (query.assignee !== undefined) filter.assigneeUserId = query.assignee;
    if (scope === "recovery") filter.inactiveAssignee = true;
  } else if (scope === "mine") {
    partition = { kind: "assignee", accountId, assigneeUserId: principal.userId, status };
  } else if (scope === "all" && query.assignee !== undefined) {
    partition = { kind: "assignee", accountId, assigneeUserId: query.assignee, status };
  } else {
    partition = { kind: "status", accountId, status };
    if (query.assignee !== undefined) filter.assigneeUserId = query.assignee;
    if (scope === "recovery") filter.inactiveAssignee = true;
  }
  const page = await queryTaskPage(partition, filter, after, limit);
  const now = new Date();
  const shown = page.tasks.slice(0, limit);
  let position: string | undefined;
  if (page.tasks.length > limit) position = shown[shown.length - 1]!.listKey;
  else if (page.evaluatedTo !== undefined && hasFilter(filter)) position = page.evaluatedTo;
  return {
    object: "list",
    data: (await withLiveRecords(principal, shown)).map((task) => presentTask(principal, task, now)),
    next_cursor: position === undefined ? null : encodeTaskCursor({ ...expected, p: position }, key),
  };
}

// --- Activity ----------------------------------------------------------------------------------

export async function listActivity(principal: Principal, taskId: string, beforeVersionText: string | undefined) {
  let beforeVersion: number | undefined;
  if (beforeVersionText !== undefined) {
    beforeVersion = Number.parseInt(beforeVersionText, 10);
    if (!Number.isSafeInteger(beforeVersion) || beforeVersion < 1)
      throw errors.invalidQueryParameter("before_version", "before_version must be a positive integer.");
  }
  const [, events] = await Promise.all([visibleTask(principal, taskId), queryActivity(principal.accountId, taskId, beforeVersion, ACTIVITY_PAGE)]);
  const shown = events.slice(0, ACTIVITY_PAGE);
  return {
    object: "list" as const,
    data: shown.map((event) => ({
      object: "task_activity" as const,
      version: event.version,
      action: event.action,
      actor: event.actorUserId,
      timestamp: event.at,
      changed_fields: event.changedFields,
    })),
    next_before_version: events.length > ACTIVITY_PAGE ? shown[shown.length - 1]!.version : null,
  };
}

// --- Stats -------------------------------------------------------------------------------------

export async function taskStats(principal: Principal, query: { scope?: "mine" | "all" | "recovery"; record_type?: TaskRecordType; record_id?: string }) {
  const scope = query.scope ?? "mine";
  requireScopePermission(scope)(principal);
  const record = await checkRecordFilter(principal, query.record_type, query.record_id);
  const now = new Date();
  const windowEnd = statsWindowEnd(now);
  const me = principal.userId;
  const inScope = (task: TaskRecord) => (scope === "mine" ? task.assigneeUserId === me : scope === "recovery" ? !task.assigneeActive : true);
  const badgeOf = (tasks: readonly TaskRecord[]) => tasks.filter((t) => t.assigneeUserId === me && countsForBadge(t, now)).length;
  let counts: { open: number; completed: number; overdue: number; current_week: number; task_badge_count: number };
  if (record) {
    // The record's tasks (all statuses) and, for the badge, the caller's open tasks due soon.
    const [tasks, mine] = await Promise.all([
      queryRecordTasks(principal.accountId, record.type, record.id),
      queryStatsWindow({ kind: "assignee", accountId: principal.accountId, userId: me }, windowEnd),
    ]);
    const scoped = tasks.filter(inScope);
    counts = {
      open: scoped.filter((t) => t.status === "open").length,
      completed: scoped.filter((t) => t.status === "completed").length,
      overdue: scoped.filter((t) => isOverdue(t, now)).length,
      current_week: scoped.filter((t) => isDueThisWeek(t, now)).length,
      task_badge_count: badgeOf(mine.tasks),
    };
  } else {
    const window = await queryStatsWindow(
      scope === "mine" ? { kind: "assignee", accountId: principal.accountId, userId: me } : { kind: "account", accountId: principal.accountId },
      windowEnd,
    );
    const tally = (window.tally ?? {}) as Record<string, number | undefined>;
    const scoped = window.tasks.filter(inScope);
    counts = {
      open: (scope === "recovery" ? tally.recoveryOpen : tally.open) ?? 0,
      completed: (scope === "recovery" ? tally.recoveryCompleted : tally.completed) ?? 0,
      overdue: scoped.filter((t) => isOverdue(t, now)).length,
      current_week: scoped.filter((t) => isDueThisWeek(t, now)).length,
      task_badge_count: badgeOf(window.tasks),
    };
  }
  return {
    object: "task_stats" as const,
    scope,
    record_type: record?.type ?? null,
    record_id: record?.id ?? null,
    ...counts,
  };
}

// --- Assignees and reconcile ---------------------------------------------------------------------

export async function listAssignees(principal: Principal) {
  let users: Pick<UserItem, "userId" | "name" | "status">[];
  if (hasPermission(principal, "tasks.assign")) {
    users = (await readUsersOfAccount(principal.accountId)).filter((u) => u.status === "active");
  } else {
    const own = await readUser(principal.accountId, principal.userId);
    users = own ? [own] : [];
  }
  users.sort((a, b) => a.name.localeCompare(b.name) || a.userId.localeCompare(b.userId));
  return { object: "task_assignees" as const, data: Object.fromEntries(users.map((u) => [u.userId, u.name])) };
}

export async function reconcileTasks(principal: Principal, input: ReconcileBody) {
  const details: ValidationDetail[] = [];
  const seen = new Set<string>();
  input.known.forEach((entry, index) => {
    if (seen.has(entry.id)) details.push({ param: `known[${index}].id`, code: "duplicate", message: "appears more than once." });
    seen.add(entry.id);
  });
  if (details.length > 0) throw errors.validationFailed(details);
  const visible = (await readTasks(principal.accountId, [...seen])).filter((t) => canSeeTask(principal, t));
  const found = new Map((await withLiveRecords(principal, visible)).map((t) => [t.taskId, t]));
  const now = new Date();
  return {
    data: input.known.filter((k) => found.has(k.id)).map((k) => presentTask(principal, found.get(k.id)!, now)),
    removed_ids: input.known.filter((k) => !found.has(k.id)).map((k) => k.id),
  };
}

// --- Reminders -----------------------------------------------------------------------------------

export function presentReminderEntry(reminder: TaskReminderItem, now: Date = new Date()) {
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
  const now = new Date();
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
      const now = new Date();
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
