import { currentTime } from "../../core/clock.js";
import { hasPermission, hasScope, type Principal } from "../../auth/permissions.js";
import type { TaskItem } from "../../db/service.js";
import { readTask } from "../../db/tasks.js";
import { errors } from "../../core/errors.js";
import { presentRecord, type StoredRecordLink } from "./records.js";
import { availableActions, shownReminderStatus, type TaskStatus } from "./rules.js";

/**
 * How a task is shown (`TaskResource`) and who sees it: users with `tasks.manage_all` see every
 * task of the account; others see the tasks assigned to them or created by them (anything
 * else is 404).
 */

/** A task as stored, with writable fields (a write builds the next state from it). */
export type TaskRecord = { -readonly [K in keyof TaskItem]: TaskItem[K] };

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

/** `null` for an absent value (the API shows absent fields as null). */
export const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export function canSeeTask(principal: Principal, task: Pick<TaskRecord, "assigneeUserId" | "creatorUserId">): boolean {
  return hasPermission(principal, "tasks.manage_all") || task.assigneeUserId === principal.userId || task.creatorUserId === principal.userId;
}

export function presentTask(principal: Principal, task: TaskRecord, now: Date = currentTime()): TaskResource {
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

/** The task if the caller sees it, else 404. */
export async function visibleTask(principal: Principal, taskId: string): Promise<TaskRecord> {
  const task = await readTask(principal.accountId, taskId);
  if (!task || !canSeeTask(principal, task)) throw errors.resourceMissing("task", taskId);
  return task;
}
