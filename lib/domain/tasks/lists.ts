import { currentTime } from "../../core/clock.js";
import { hasPermission, hasScope, type Principal } from "../../auth/permissions.js";
import { readUsersOfAccount } from "../../db/admin-store.js";
import { readUser } from "../../db/auth-store.js";
import type { UserItem } from "../../db/service.js";
import { hasFilter, queryActivity, queryRecordTasks, queryStatsWindow, queryTaskPage, readTasks, type TaskFilter, type TaskPartition } from "../../db/tasks.js";
import { errors, type ValidationDetail } from "../../core/errors.js";
import type { ReconcileBody } from "../../schemas/tasks.js";
import { ACTIVITY_PAGE, DEFAULT_TASK_LIMIT } from "../../schemas/tasks.js";
import { cursorPosition, encodeTaskCursor, filterFingerprint, taskCursorKey } from "./cursor.js";
import { countsForBadge, isDueThisWeek, isOverdue, statsWindowEnd } from "./deadlines.js";
import { RECORD_READ_SCOPES, resolveRecords, withLiveRecords, type TaskRecordType } from "./records.js";
import type { TaskStatus } from "./rules.js";
import { canSeeTask, presentTask, visibleTask, type TaskRecord, type TaskResource } from "./views.js";
import { kindWords, withArticle } from "../../core/text.js";

/**
 * Reads of many tasks (spec part 2, section 4.6): the task lists (one Query per page, signed
 * cursors), a task's activity, the stats, the assignees a caller may choose, and reconcile.
 */

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
      throw errors.permissionDenied(`scope=${scope} requires the tasks.manage_all permission.`, "scope");
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
  const now = currentTime();
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
  const now = currentTime();
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
  const now = currentTime();
  return {
    data: input.known.filter((k) => found.has(k.id)).map((k) => presentTask(principal, found.get(k.id)!, now)),
    removed_ids: input.known.filter((k) => !found.has(k.id)).map((k) => k.id),
  };
}
