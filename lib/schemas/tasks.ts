import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { blankAsNull, documentedAs, isoDate, optionalText, requiredText, text, uuid } from "./common.js";
import { canonicalTimeZone, DUE_TIME } from "../core/time-zones.js";
import { REMINDER_OPERATIONS, REMINDER_STATUSES, SNOOZE_MINUTES, TASK_ACTIONS, TASK_RECORD_TYPES, TASK_STATUSES } from "../core/task-vocabulary.js";

/** Tasks and reminders (spec part 2, sections 2.6, 3.6 and 4.6; architecture section 8). */
export const MAX_DESCRIPTION = 10_000;
export const MAX_RECONCILE = 100;
export const DEFAULT_TASK_LIMIT = 40;
export const INBOX_PAGE = 40;
export const ACTIVITY_PAGE = 40;

const timestamp = lazy(() => z.string().meta({ format: "date-time", example: "2026-11-23T17:00:00.000Z" }));

// --- Requests --------------------------------------------------------------------------------

const recordType = lazy(() =>
  z.enum(TASK_RECORD_TYPES).meta({
    description:
      "Kind of the linked record: customer, prospect, supplier, item (inventory item), invoice, estimate, purchase_order, sales_order, stock_transfer or kit.",
  }),
);

export const recordReference = lazy(() =>
  z.strictObject({ type: recordType(), id: uuid() }).meta({ id: "TaskRecordReference", description: "A record of the account: `{type, id}`." }),
);

const timeZone = lazy(() =>
  z
    .string()
    .max(64)
    .refine((value) => canonicalTimeZone(value) !== undefined, "must be an IANA time zone such as Europe/London")
    .transform((value) => canonicalTimeZone(value)!)
    .meta({ description: "IANA time zone of the schedule, e.g. America/New_York.", example: "Europe/London" }),
);

const dueTime = lazy(() =>
  z.string().regex(DUE_TIME, "must be a local time HH:mm").meta({ description: "Local time HH:mm in the task's zone.", example: "17:00" }),
);

/** The latest due date: its deadline (the start of the next day in the task's zone) stays within year 9999. */
const LAST_DUE_DATE = "9999-12-30";

const writableFields = lazy(() => ({
  title: requiredText(255).meta({ description: "1 to 255 characters." }),
  description: optionalText(MAX_DESCRIPTION).meta({ description: "Free text; null clears it." }),
  assignee_user_id: uuid().nullable().meta({
    description: "An active user of the account (default, or null: the caller). Assigning another user needs the tasks.assign permission.",
  }),
  due_date: blankAsNull(
    isoDate()
      // The deadline ends at the start of the next day, which must still be a four-digit year anywhere.
      .refine((date) => date <= LAST_DUE_DATE, `must be on or before ${LAST_DUE_DATE}`),
  ).meta({ description: `YYYY-MM-DD in the task's zone, up to ${LAST_DUE_DATE}; null (or blank) removes the deadline (and its time).` }),
  due_time: blankAsNull(dueTime()).meta({ description: "HH:mm, requires due_date; null (or blank) makes the deadline date-only." }),
  time_zone: timeZone().nullable(),
  time_zone_mode: z.enum(["mine", "assignee"]).nullable().meta({
    description:
      "Resolve the zone on the server: `mine` (the default; also null) = the caller's zone, `assignee` = the assignee's; each falls back to the account's zone, then UTC. Cannot be combined with time_zone (null time_zone clears it: the mode's zone).",
  }),
  reminder_at: blankAsNull(z.string().max(64)).meta({
    description:
      "A future ISO 8601 timestamp with an explicit offset (Z or +hh:mm): schedules a reminder for the assignee; null (or blank) removes the reminder.",
    example: "2026-11-23T09:00:00+01:00",
  }),
  record: recordReference().nullable().meta({ description: "The linked record `{type, id}`, or null to unlink." }),
}));

const noZoneConflict = <T extends { time_zone?: unknown; time_zone_mode?: unknown }>(body: T, ctx: z.RefinementCtx) => {
  if (body.time_zone != null && body.time_zone_mode != null) {
    ctx.addIssue({ code: "custom", path: ["time_zone_mode"], message: "cannot be combined with time_zone" });
  }
};

/** The fields after `status` that create and update both accept, each optional. */
const optionalWritableFields = () => ({
  assignee_user_id: writableFields().assignee_user_id.optional(),
  due_date: writableFields().due_date.optional(),
  due_time: writableFields().due_time.optional(),
  time_zone: writableFields().time_zone.optional(),
  time_zone_mode: writableFields().time_zone_mode.optional(),
  reminder_at: writableFields().reminder_at.optional(),
  record: writableFields().record.optional(),
});

/** A task write body: `head` (the fields where create and update differ), then the shared optional ones. */
const taskWriteBody = <H extends z.ZodRawShape>(id: string, head: H) =>
  z
    .strictObject({ ...head, ...optionalWritableFields() })
    .superRefine(noZoneConflict)
    .meta({ id });

export const taskCreateBody = lazy(() =>
  taskWriteBody("TaskCreate", {
    title: writableFields().title,
    description: writableFields().description,
    status: z.literal("open").optional().meta({ description: "New tasks are open (the only accepted value)." }),
  }),
);

export const taskUpdateBody = lazy(() =>
  taskWriteBody("TaskUpdate", {
    version: z.int().min(1).max(2_000_000_000).meta({ description: "The task's current version (optimistic concurrency)." }),
    title: writableFields().title.optional(),
    description: writableFields().description,
    status: z.enum(TASK_STATUSES).optional().meta({ description: "open -> completed | cancelled; completed | cancelled -> open (reopen)." }),
  }),
);

export type TaskCreateBody = Infer<typeof taskCreateBody>;
export type TaskUpdateBody = Infer<typeof taskUpdateBody>;

export const reminderActionBody = lazy(() =>
  z
    .strictObject({
      version: z
        .int()
        .min(1)
        .max(2_000_000_000)
        .optional()
        .meta({ description: "The task's current version: required by snooze and complete, refused by read and dismiss." }),
      minutes: z
        .union(SNOOZE_MINUTES.map((m) => z.literal(m)) as unknown as [z.ZodLiteral<5>, z.ZodLiteral<15>, z.ZodLiteral<60>, z.ZodLiteral<1440>], {
          error: `must be one of ${SNOOZE_MINUTES.join(", ")}.`,
        })
        .optional()
        .meta({ description: "snooze only: 5, 15, 60 or 1440 minutes from now." }),
    })
    .meta({ id: "TaskReminderAction", description: "read and dismiss: `{}`; snooze: `{version, minutes}`; complete: `{version}`." }),
);
export type ReminderActionBody = Infer<typeof reminderActionBody>;

export const reconcileBody = lazy(() =>
  z
    .strictObject({
      known: z
        .array(z.strictObject({ id: uuid(), version: z.int().min(1).max(2_000_000_000) }))
        .max(MAX_RECONCILE)
        .meta({ description: `The tasks a client holds, at most ${MAX_RECONCILE}: ids unique.` }),
    })
    .meta({ id: "TaskReconcileRequest" }),
);
export type ReconcileBody = Infer<typeof reconcileBody>;

/** A query integer (up to 10 digits; the service checks the range and answers 422 outside it), documented with that range. */
const integerText = (description: string, range: { minimum: number; maximum: number; default?: number }) =>
  z
    .string()
    .regex(/^\d{1,10}$/, "must be a positive integer")
    .meta({ description, ...documentedAs({ schema: { type: "integer", ...range } }) });

/** record_type is matched case-insensitively and echoed in lower case. */
const recordTypeQuery = lazy(() =>
  z
    .string()
    .max(32)
    .transform((value) => value.toLowerCase())
    .pipe(recordType())
    .optional(),
);

export const taskListQuery = lazy(() =>
  z.object({
    status: z.enum(TASK_STATUSES).optional().meta({ description: "open (default), completed or cancelled." }),
    scope: z.enum(["mine", "all", "recovery"]).optional().meta({
      description:
        "mine (default): tasks assigned to the caller. all: every task of the account. recovery: tasks assigned to users who are no longer active. all and recovery need tasks.manage_all.",
    }),
    assignee: uuid().optional().meta({ description: "Only tasks assigned to this user (within the scope)." }),
    q: text(100).optional().meta({ description: "Case-insensitive search in titles, up to 100 characters." }),
    record_type: recordTypeQuery().meta({
      description: "With record_id: only tasks linked to this record (needs its read scope and visibility). Matched case-insensitively.",
      ...documentedAs({ schema: { type: "string", enum: [...TASK_RECORD_TYPES] } }),
    }),
    record_id: uuid().optional().meta({ description: "With record_type: the linked record." }),
    due_from: isoDate().optional().meta({ description: "Stored due date on or after (YYYY-MM-DD)." }),
    due_to: isoDate().optional().meta({ description: "Stored due date on or before (YYYY-MM-DD)." }),
    limit: integerText(`1 to 100, default ${DEFAULT_TASK_LIMIT}.`, { minimum: 1, maximum: 100, default: DEFAULT_TASK_LIMIT }).optional(),
    cursor: z.string().max(1000).optional().meta({ description: "next_cursor of the previous page (same filters)." }),
  }),
);

export const taskStatsQuery = lazy(() =>
  z.object({
    scope: taskListQuery().shape.scope,
    record_type: taskListQuery().shape.record_type,
    record_id: taskListQuery().shape.record_id,
  }),
);

export const activityQuery = lazy(() =>
  z.object({
    before_version: integerText("Events of versions below this one (the previous page's next_before_version).", {
      minimum: 1,
      maximum: 9_999_999_999,
    }).optional(),
  }),
);

export const inboxQuery = lazy(() =>
  z.object({
    cursor: z.string().max(1000).optional().meta({ description: "next_cursor of the previous page." }),
  }),
);

export const taskPath = lazy(() => z.object({ id: uuid() }));
export const reminderActionPath = lazy(() => z.object({ id: uuid(), operation: z.enum(REMINDER_OPERATIONS) }));

// --- Responses -------------------------------------------------------------------------------

export const taskAssignee = lazy(() =>
  z
    .object({
      id: uuid(),
      name: z.string(),
      photo_url: z.string().nullable().meta({ description: "Profile photo URL; null while users have none." }),
      active: z.boolean().meta({ description: "False once the user is inactive or no longer in the account." }),
    })
    .meta({ id: "TaskAssignee" }),
);

export const taskReminder = lazy(() =>
  z
    .object({
      id: uuid(),
      generation: z.int().min(1).meta({ description: "Occurrence number: 1, then +1 for each snooze, new reminder_at or reassignment." }),
      status: z.enum(REMINDER_STATUSES).meta({ description: "scheduled; delivered once scheduled_at has passed; then read, dismissed or completed." }),
      scheduled_at: timestamp(),
      read_at: timestamp().nullable(),
    })
    .meta({ id: "TaskReminder" }),
);

export const taskRecordPreview = lazy(() =>
  z
    .union([
      z.object({
        type: recordType(),
        id: uuid(),
        name: z.string(),
        number: z
          .union([z.int().min(1), z.string()])
          .nullable()
          .meta({ description: "The record's number as the record shows it." }),
      }),
      z
        .object({ available: z.literal(false) })
        .meta({ description: "The link exists but the record is not accessible to the caller (or no longer exists); its former name and id are withheld." }),
    ])
    .meta({ id: "TaskRecordPreview" }),
);

export const taskResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("task"),
      title: z.string(),
      description: z.string().nullable(),
      status: z.enum(TASK_STATUSES),
      version: z.int().min(1),
      time_zone: z.string(),
      due_date: z.string().nullable(),
      due_time: z.string().nullable(),
      due_at: timestamp().nullable().meta({ description: "UTC instant of a timed deadline; null for date-only." }),
      overdue_at: timestamp().nullable().meta({ description: "Timed: = due_at. Date-only: the start of the next local day in time_zone, in UTC." }),
      created: timestamp(),
      modified: timestamp(),
      completed_at: timestamp().nullable(),
      assignee: taskAssignee(),
      reminder: taskReminder().nullable(),
      record: taskRecordPreview().nullable(),
      available_actions: z.array(z.enum(TASK_ACTIONS)),
    })
    .meta({ id: "Task" }),
);

export const taskList = lazy(() =>
  z
    .object({
      object: z.literal("list"),
      data: z.array(taskResource()),
      next_cursor: z.string().nullable().meta({
        description: "Continue with the same filters and this cursor; null at the end. A page may hold fewer than `limit` tasks while filters skip tasks.",
      }),
    })
    .meta({ id: "TaskList" }),
);

export const taskActivityEvent = lazy(() =>
  z
    .object({
      object: z.literal("task_activity"),
      version: z.int().min(1),
      action: z.enum(["created", "updated", "completed", "cancelled", "reopened", "reminder_snoozed"]),
      actor: uuid().meta({ description: "The user who made the change." }),
      timestamp: timestamp(),
      changed_fields: z.array(z.string()).meta({ description: "Names of the fields that changed (never their values)." }),
    })
    .meta({ id: "TaskActivityEvent" }),
);

export const taskActivityList = lazy(() =>
  z
    .object({
      object: z.literal("list"),
      data: z.array(taskActivityEvent()),
      next_before_version: z.int().min(1).nullable().meta({ description: "Pass as before_version for the next page; null at the end." }),
    })
    .meta({ id: "TaskActivityList" }),
);

export const taskStats = lazy(() =>
  z
    .object({
      object: z.literal("task_stats"),
      scope: z.enum(["mine", "all", "recovery"]),
      record_type: recordType().nullable(),
      record_id: uuid().nullable(),
      open: z.int().min(0),
      completed: z.int().min(0),
      overdue: z.int().min(0).meta({ description: "Open tasks past overdue_at." }),
      current_week: z.int().min(0).meta({ description: "Open tasks whose due date falls in the current week (Monday to Sunday) of their own zone." }),
      task_badge_count: z
        .int()
        .min(0)
        .meta({ description: "Open tasks assigned to the caller that are due today (in their zone) or overdue; independent of scope and filters." }),
    })
    .meta({ id: "TaskStats" }),
);

export const taskAssigneeMap = lazy(() =>
  z
    .object({
      object: z.literal("task_assignees"),
      data: z.record(uuid(), z.string()).meta({ description: "User UUID -> display name, active users only, ordered by name." }),
    })
    .meta({ id: "TaskAssigneeMap" }),
);

export const taskReconciliation = lazy(() =>
  z
    .object({
      data: z.array(taskResource()).meta({ description: "Every supplied task still accessible, current (also when its version matches)." }),
      removed_ids: z.array(uuid()).meta({ description: "Supplied ids no longer accessible: missing, or outside the caller's visibility." }),
    })
    .meta({ id: "TaskReconciliation" }),
);

export const reminderEntry = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("task_reminder"),
      generation: z.int().min(1),
      status: z.enum(REMINDER_STATUSES),
      scheduled_at: timestamp(),
      read_at: timestamp().nullable(),
      task: z
        .object({
          id: uuid(),
          title: z.string(),
          status: z.enum(TASK_STATUSES),
          version: z.int().min(1),
          due_date: z.string().nullable(),
          due_time: z.string().nullable(),
          due_at: timestamp().nullable(),
          time_zone: z.string(),
        })
        .meta({ id: "TaskReminderTask", description: "The task the reminder is about (its version is what snooze and complete need)." }),
    })
    .meta({ id: "TaskReminderEntry" }),
);

export const reminderInbox = lazy(() =>
  z
    .object({
      object: z.literal("list"),
      data: z.array(reminderEntry()),
      unread_count: z.int().min(0).meta({ description: "The caller's delivered reminders not yet read, dismissed or completed." }),
      next_cursor: z.string().nullable(),
    })
    .meta({ id: "TaskReminderInbox" }),
);
