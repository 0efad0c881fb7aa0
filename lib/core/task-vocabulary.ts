/**
 * The words of tasks and reminders (spec part 2, section 3.6): the values the request schemas
 * accept and the task rules (`lib/domain/tasks/rules.ts`) reason about. Plain lists, no rules.
 */
export const TASK_RECORD_TYPES = [
  "customer",
  "prospect",
  "supplier",
  "item",
  "invoice",
  "estimate",
  "purchase_order",
  "sales_order",
  "stock_transfer",
  "kit",
] as const;
export type TaskRecordType = (typeof TASK_RECORD_TYPES)[number];

export const TASK_STATUSES = ["open", "completed", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TASK_ACTIONS = ["edit", "complete", "cancel", "reopen"] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

export const STORED_REMINDER_STATUSES = ["scheduled", "read", "dismissed", "completed"] as const;
export type StoredReminderStatus = (typeof STORED_REMINDER_STATUSES)[number];

export const REMINDER_STATUSES = ["scheduled", "delivered", "read", "dismissed", "completed"] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

export const REMINDER_OPERATIONS = ["read", "dismiss", "snooze", "complete"] as const;
export type ReminderOperation = (typeof REMINDER_OPERATIONS)[number];

export const SNOOZE_MINUTES = [5, 15, 60, 1440] as const;
