import { Entity } from "electrodb";

/**
 * The stored attributes of a task, shared by the task record (`task.ts`) and its copies under
 * the linked record (`task-link.ts`): a copy holds everything a list page shows, so one Query
 * serves a page.
 *
 * Besides the task's own fields, a task keeps snapshots that its presentation needs, so that a
 * list page needs no other read: the assignee's name and active state, and the linked record's
 * name, number and access facts (`ownerUserId` for parties). They are taken at every write of
 * the task and refreshed by the stream processor when the user or the record changes
 * (`lib/domain/tasks/links.ts`). Permissions are never stored: access is judged on every read
 * from the caller's live permissions and scopes.
 */
export const taskAttributes = {
  accountId: { type: "string", required: true, readOnly: true },
  taskId: { type: "string", required: true, readOnly: true },
  title: { type: "string", required: true },
  /** Lower-cased title, for `q`. */
  titleKey: { type: "string", required: true },
  description: { type: "string" },
  status: { type: ["open", "completed", "cancelled"] as const, required: true },
  /** The API's optimistic version: +1 per change of the task. */
  version: { type: "number", required: true },
  /** Internal write counter: +1 per write of the item (also reminder reads and snapshot refreshes). */
  rev: { type: "number", required: true },
  timeZone: { type: "string", required: true },
  dueDate: { type: "string" },
  dueTime: { type: "string" },
  dueAt: { type: "string" },
  overdueAt: { type: "string" },
  /** `<overdueAt or ~>#<taskId>`: the list order (deadline, then UUID, undated last). */
  listKey: { type: "string", required: true },
  creatorUserId: { type: "string", required: true, readOnly: true },
  assigneeUserId: { type: "string", required: true },
  assigneeName: { type: "string", required: true },
  assigneeActive: { type: "boolean", required: true },
  /** The current reminder occurrence (one reminder per task, its generations numbered). */
  reminder: {
    type: "map",
    properties: {
      id: { type: "string", required: true },
      generation: { type: "number", required: true },
      status: { type: ["scheduled", "read", "dismissed", "completed"] as const, required: true },
      scheduledAt: { type: "string", required: true },
      readAt: { type: "string" },
      recipientUserId: { type: "string", required: true },
    },
  },
  /** The linked record and its snapshot (`state`: resolved, gone, or unresolved while its kind has no resolver). */
  record: {
    type: "map",
    properties: {
      type: { type: "string", required: true },
      id: { type: "string", required: true },
      state: { type: ["resolved", "gone", "unresolved"] as const, required: true },
      name: { type: "string" },
      number: { type: "any" },
      ownerUserId: { type: "string" },
      /** Documents: where the document is, for the location rule. */
      locationScope: { type: "string" },
    },
  },
  createdAt: { type: "string", required: true, readOnly: true },
  modifiedAt: { type: "string", required: true },
  completedAt: { type: "string" },
} as const;

/**
 * A task (spec part 2, section 2.6). Its partition also holds its activity events
 * (`task-activity.ts`). Two list orderings, both by `listKey` (deadline, then UUID):
 * - `byAssignee` (gsi1): one assignee's tasks of one status. The partition of a user's OPEN
 *   tasks also holds that user's tally (`task-tally.ts`, sort key `!tally`, before every
 *   deadline), so one Query reads the counts and the open tasks the stats need.
 * - `byStatus` (gsi2): the account's tasks of one status; its open partition holds the
 *   account's tally (`task-account-tally.ts`) the same way.
 * Every write is a whole-item put conditioned on `rev` (read-modify-write).
 */
export const taskEntity = () =>
  new Entity({
    model: { entity: "task", version: "1", service: "inv" },
    attributes: taskAttributes,
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "taskId"], template: "$inv#accountid_${accountId}#task_${taskId}", casing: "none" },
        sk: { field: "sk", composite: [], template: "task", casing: "none" },
      },
      byAssignee: {
        index: "gsi1",
        pk: {
          field: "gsi1pk",
          composite: ["accountId", "assigneeUserId", "status"],
          template: "$inv#accountid_${accountId}#tasks#assignee_${assigneeUserId}#${status}",
          casing: "none",
        },
        sk: { field: "gsi1sk", composite: ["listKey"], template: "${listKey}", casing: "none" },
      },
      byStatus: {
        index: "gsi2",
        pk: { field: "gsi2pk", composite: ["accountId", "status"], template: "$inv#accountid_${accountId}#tasks#${status}", casing: "none" },
        sk: { field: "gsi2sk", composite: ["listKey"], template: "${listKey}", casing: "none" },
      },
    },
  });
