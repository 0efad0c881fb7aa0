import { API_PREFIX, route, type RouteDefinition } from "./define.js";
import {
  activityQuery,
  inboxQuery,
  reconcileBody,
  reminderActionBody,
  reminderActionPath,
  reminderEntry,
  reminderInbox,
  taskActivityList,
  taskAssigneeMap,
  taskCreateBody,
  taskList,
  taskListQuery,
  taskPath,
  taskReconciliation,
  taskResource,
  taskStats,
  taskStatsQuery,
  taskUpdateBody,
} from "../schemas/tasks.js";

/**
 * Endpoint group `tasks` (spec part 2, sections 2.6, 3.6 and 4.6; architecture section 8).
 * Every response, errors included, is `Cache-Control: no-store` (`noStore`). The literal paths
 * `/tasks/stats`, `/tasks/assignees`, `/tasks/reminders` and `/tasks/reconcile` take precedence
 * over `/tasks/{id}` (API Gateway prefers literal segments; so does the local matcher).
 */
const TASKS = `${API_PREFIX}/tasks`;
const common = { group: "tasks", noStore: true, headers: ["Cache-Control"] } as const;

const VISIBILITY =
  "Users with tasks.manage_all see every task of the account; other users see the tasks assigned to them or created by them (any other task is 404).";

export const taskRoutes: RouteDefinition[] = [
  route({
    ...common,
    operationId: "listTasks",
    method: "GET",
    path: TASKS,
    summary: "List tasks by deadline (cursor pages)",
    description: `Ordered by deadline (overdue_at: due_at for timed tasks, the end of the local due date for date-only ones), then UUID; undated tasks last. status defaults to open, scope to mine (assigned to the caller); all and recovery (tasks whose assignee is no longer active) need tasks.manage_all. record_type and record_id go together and need the record's read scope and visibility. Continue with next_cursor and the same filters; a cursor of other filters, another user or account, or tampered, is 400 invalid_cursor: restart without it. With filters that skip tasks (q, due_from, due_to, assignee within recovery, a record with scope mine or recovery), a page may hold fewer than limit tasks while next_cursor is not null. ${VISIBILITY}`,
    scopes: ["tasks:read"],
    idempotency: "none",
    request: { query: taskListQuery },
    example: { query: { status: "open", scope: "mine", limit: "40" } },
    responses: { 200: taskList },
    errors: { 400: ["invalid_cursor"], 403: ["permission_denied"] },
  }),
  route({
    ...common,
    operationId: "createTask",
    method: "POST",
    path: TASKS,
    summary: "Create a task",
    description:
      "status must be open. assignee_user_id defaults to the caller; assigning another (active) user needs tasks.assign. time_zone (IANA) or time_zone_mode (mine: the caller's zone; assignee: the assignee's; each falls back to the account's, then UTC), default mine. due_time needs due_date. A date-only deadline has no due_at and is overdue from the start of the next local day; a timed one has a UTC due_at (a local time in a daylight-saving gap moves forward by the gap; an ambiguous one is its first occurrence). reminder_at (future, explicit offset) schedules a reminder for the assignee. record {type, id} needs the read scope of its kind and access to it (else 422 on record.id); kinds without a resolver yet are stored and shown {available: false}.",
    scopes: ["tasks:write"],
    idempotency: "required",
    request: { body: taskCreateBody },
    example: {
      body: {
        title: "Call back about the spring order",
        description: "Confirm quantities before Friday.",
        due_date: "2030-11-27",
        due_time: "16:30",
        time_zone: "Europe/London",
        reminder_at: "2030-11-27T09:00:00+00:00",
        record: { type: "customer", id: "00000000-0000-4000-8000-000000000001" },
      },
    },
    responses: { 201: taskResource },
    errors: { 403: ["permission_denied"] },
  }),
  route({
    ...common,
    operationId: "getTask",
    method: "GET",
    path: `${TASKS}/{id}`,
    summary: "Retrieve a task",
    description: `A linked record the caller cannot access (read scope, visibility) or that no longer exists shows as {available: false}. ${VISIBILITY}`,
    scopes: ["tasks:read"],
    idempotency: "none",
    request: { path: taskPath },
    responses: { 200: taskResource },
  }),
  route({
    ...common,
    operationId: "updateTask",
    method: "PATCH",
    path: `${TASKS}/{id}`,
    summary: "Update a task (optimistic version)",
    description:
      "version must be the task's current version (else 409 task_conflict); each change adds 1. Only the fields sent change; null clears an optional value (due_date null removes the deadline). status: open -> completed | cancelled, completed | cancelled -> open; a closed task only changes by a reopen (409 task_transition_not_allowed). Closing a task ends its reminder; a reopen does not restore it (send a future reminder_at). Reassigning moves a live reminder to the new assignee (a new generation). A request that changes nothing returns the task as it is.",
    scopes: ["tasks:write"],
    idempotency: "required",
    request: { path: taskPath, body: taskUpdateBody },
    example: { body: { version: 1, status: "completed" } },
    responses: { 200: taskResource },
    errors: { 403: ["permission_denied"], 409: ["task_conflict", "task_transition_not_allowed"] },
  }),
  route({
    ...common,
    operationId: "listTaskActivity",
    method: "GET",
    path: `${TASKS}/{id}/activity`,
    summary: "A task's activity, newest version first",
    description:
      "Up to 40 events in descending version order: action, version, actor, timestamp and the names of the changed fields (never their values). Continue with before_version = next_before_version.",
    scopes: ["tasks:read"],
    idempotency: "none",
    request: { path: taskPath, query: activityQuery },
    responses: { 200: taskActivityList },
  }),
  route({
    ...common,
    operationId: "getTaskStats",
    method: "GET",
    path: `${TASKS}/stats`,
    summary: "Task counts for a scope (and optionally a record)",
    description:
      "open, completed, overdue (open, past overdue_at) and current_week (open, due date in the current Monday-to-Sunday week of the task's zone) for the scope (mine, all, recovery; the last two need tasks.manage_all), optionally for one record (record_type with record_id, echoed normalized). task_badge_count: open tasks assigned to the caller that are due today in their zone or overdue, whatever the scope and filters. Without a record: one DynamoDB Query after authentication.",
    scopes: ["tasks:read"],
    idempotency: "none",
    request: { query: taskStatsQuery },
    example: { query: { scope: "mine" } },
    responses: { 200: taskStats },
    errors: { 403: ["permission_denied"] },
  }),
  route({
    ...common,
    operationId: "listTaskAssignees",
    method: "GET",
    path: `${TASKS}/assignees`,
    summary: "Users a task can be assigned to",
    description: "Active users of the account (user UUID -> display name). Without tasks.assign, only the caller's own entry.",
    scopes: ["tasks:read"],
    idempotency: "none",
    request: {},
    responses: { 200: taskAssigneeMap },
  }),
  route({
    ...common,
    operationId: "reconcileTasks",
    method: "POST",
    path: `${TASKS}/reconcile`,
    summary: "Refresh a client's copy of tasks",
    description:
      "known: up to 100 {id, version}. data: every supplied task the caller can still see, current (also when the version matches); removed_ids: supplied ids no longer accessible (missing, or outside the caller's visibility). Read-only: no Idempotency-Key.",
    scopes: ["tasks:read"],
    idempotency: "none",
    request: { body: reconcileBody },
    example: { body: { known: [{ id: "00000000-0000-4000-8000-000000000001", version: 3 }] } },
    responses: { 200: taskReconciliation },
  }),
  route({
    ...common,
    operationId: "listTaskReminders",
    method: "GET",
    path: `${TASKS}/reminders`,
    summary: "The caller's reminder inbox",
    description:
      "The caller's own delivered reminders (scheduled_at passed; delivered or read), newest first, at most 40 per page; continue with next_cursor. Fetching marks nothing read. unread_count: the caller's delivered reminders not yet read, dismissed or completed.",
    scopes: ["tasks:read"],
    idempotency: "none",
    request: { query: inboxQuery },
    responses: { 200: reminderInbox },
    errors: { 400: ["invalid_cursor"] },
  }),
  route({
    ...common,
    operationId: "actOnTaskReminder",
    method: "POST",
    path: `${TASKS}/reminders/{id}/{operation}`,
    summary: "Read, dismiss, snooze or complete a reminder",
    description:
      "Only the reminder's recipient (the assignee it is addressed to) can act; for anyone else it is 404. read and dismiss: body {}; they change the reminder, not the task (its version stays). snooze: {version, minutes} with minutes 5, 15, 60 or 1440: a new generation scheduled that many minutes from now, in any task state, even once the reminder ended; due date and task status kept. complete: {version}: completes the open task (whatever the reminder's state) and the reminder. read of an undue reminder, read/dismiss of an ended one: 409 reminder_not_actionable. A stale version is 409 task_conflict. Refresh the task and the inbox afterwards.",
    scopes: ["tasks:write"],
    idempotency: "required",
    request: { path: reminderActionPath, body: reminderActionBody },
    example: { body: { version: 3, minutes: 15 } },
    responses: { 200: reminderEntry },
    errors: { 409: ["task_conflict", "reminder_not_actionable", "task_transition_not_allowed"] },
  }),
];
