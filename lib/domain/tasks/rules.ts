/**
 * Task and reminder state rules (spec part 2, section 3.6): pure functions, no database.
 *
 * Task: created `open`; PATCH `status` moves open -> completed | cancelled and completed |
 * cancelled -> open (a reopen). Only an open task can be edited (title, dates, assignee...);
 * a closed task can only be reopened, possibly with other changes in the same request.
 *
 * Reminder (one per task, its occurrence counted by `generation`): stored `scheduled`, shown
 * `delivered` once `scheduled_at` has passed (due by time: no scheduler), then `read`,
 * `dismissed` or `completed`. A reminder is live (it can still be acted on) while scheduled,
 * delivered or read; dismissed and completed are final for that occurrence.
 */
import type { Scope } from "../../auth/permissions.js";
import type { ReminderOperation, ReminderStatus, StoredReminderStatus, TaskAction, TaskRecordType, TaskStatus } from "../../core/task-vocabulary.js";

export {
  REMINDER_OPERATIONS,
  REMINDER_STATUSES,
  SNOOZE_MINUTES,
  STORED_REMINDER_STATUSES,
  TASK_ACTIONS,
  TASK_RECORD_TYPES,
  TASK_STATUSES,
  type ReminderOperation,
  type ReminderStatus,
  type StoredReminderStatus,
  type TaskAction,
  type TaskRecordType,
  type TaskStatus,
} from "../../core/task-vocabulary.js";

/** The read scope each kind's preview needs (spec part 1, section 5, rule 7). */
export const RECORD_READ_SCOPES: Record<TaskRecordType, Scope> = {
  customer: "customers:read",
  prospect: "prospects:read",
  supplier: "suppliers:read",
  item: "items:read",
  invoice: "invoices:read",
  estimate: "estimates:read",
  purchase_order: "purchase_orders:read",
  sales_order: "sales_orders:read",
  stock_transfer: "stock_transfers:read",
  kit: "kits:read",
};

/** What the caller can do with a task it sees: by status, and only with the tasks:write scope. */
export function availableActions(status: TaskStatus, canWrite: boolean): TaskAction[] {
  if (!canWrite) return [];
  return status === "open" ? ["edit", "complete", "cancel"] : ["reopen"];
}

/** Whether PATCH may move a task from one status to another (same status: no transition). */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  if (from === to) return true;
  return from === "open" ? to === "completed" || to === "cancelled" : to === "open";
}

/** The status a reminder shows: a scheduled one is delivered once its time has come. */
export function shownReminderStatus(status: StoredReminderStatus, scheduledAt: string, now: Date): ReminderStatus {
  return status === "scheduled" && Date.parse(scheduledAt) <= now.getTime() ? "delivered" : status;
}

/** Whether a reminder still counts as unread for its recipient (until read, dismissed or completed). */
export const isPendingReminder = (status: StoredReminderStatus): boolean => status === "scheduled";

export const isLiveReminder = (status: StoredReminderStatus): boolean => status === "scheduled" || status === "read";

export type ReminderDecision =
  | { ok: true; change: "none" | "read" | "dismiss" | "snooze" | "complete" }
  | { ok: false; code: "reminder_not_actionable" | "task_transition_not_allowed"; message: string };

/**
 * What a reminder operation does, given the reminder's shown status and the task's status
 * (the version check comes first, in the caller):
 * - read: a delivered reminder becomes read; reading a read one changes nothing; a reminder
 *   that is not due yet, dismissed or completed cannot be read.
 * - dismiss: a live reminder (scheduled, delivered or read) becomes dismissed.
 * - snooze: the reminder gets a new generation `minutes` from now, in any task status (spec part 2,
 *   3.6: "any | reminder snooze | unchanged"), so also once the task's completion or
 *   cancellation ended it, or its recipient dismissed it.
 * - complete: completes an open task and its reminder, whatever the reminder's own state
 *   (spec part 2, 3.6: "open | reminder complete | completed | needs current version").
 */
export function decideReminderOperation(operation: ReminderOperation, shown: ReminderStatus, taskStatus: TaskStatus): ReminderDecision {
  const finished = shown === "dismissed" || shown === "completed";
  const notActionable = (message: string): ReminderDecision => ({ ok: false, code: "reminder_not_actionable", message });
  switch (operation) {
    case "read":
      if (shown === "read") return { ok: true, change: "none" };
      if (shown === "delivered") return { ok: true, change: "read" };
      return notActionable(shown === "scheduled" ? "This reminder is not due yet; it cannot be read before it is delivered." : `This reminder is ${shown}.`);
    case "dismiss":
      return finished ? notActionable(`This reminder is already ${shown}.`) : { ok: true, change: "dismiss" };
    case "snooze":
      return { ok: true, change: "snooze" };
    case "complete":
      // Spec part 2, 3.6: "open | reminder complete | completed", whatever became of the reminder.
      if (taskStatus !== "open")
        return { ok: false, code: "task_transition_not_allowed", message: `The task is ${taskStatus}; only an open task can be completed.` };
      return { ok: true, change: "complete" };
  }
}
