import { Entity } from "electrodb";

/**
 * A user's task tally: how many tasks assigned to the user are open, completed, cancelled,
 * and the user's pending reminders (reminder id -> scheduled instant; an entry per reminder
 * not yet read, dismissed or completed). Moved in the same transaction as the tasks.
 *
 * It sits in gsi1 in the partition of the user's OPEN tasks, sorted before them (`!tally`):
 * one Query of that partition up to the end of the stats window reads the counts and every
 * open task that can be overdue or due this week. `unread_count` of the inbox is the number
 * of pending entries already due (a plain number could not change at the moment a reminder
 * falls due without a scheduler).
 */
export const taskTallyEntity = () =>
  new Entity({
    model: { entity: "tasktally", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      userId: { type: "string", required: true, readOnly: true },
      open: { type: "number", required: true, default: 0 },
      completed: { type: "number", required: true, default: 0 },
      cancelled: { type: "number", required: true, default: 0 },
      /** Not `required`: ElectroDB would then refuse to remove its entries. Created as {}. */
      pending: { type: "any", default: () => ({}) },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#tasktally", casing: "none" },
        sk: { field: "sk", composite: ["userId"], template: "user_${userId}", casing: "none" },
      },
      openTasks: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId", "userId"], template: "$inv#accountid_${accountId}#tasks#assignee_${userId}#open", casing: "none" },
        sk: { field: "gsi1sk", composite: [], template: "!tally", casing: "none" },
      },
    },
  });
