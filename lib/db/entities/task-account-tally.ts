import { Entity } from "electrodb";

/**
 * The account's task tally: open, completed and cancelled tasks, and the same counts of the
 * tasks in recovery (assigned to a user who is no longer active). Moved in the same
 * transaction as the tasks (and by the stream processor when an assignee's state changes).
 * It sits in gsi2 in the partition of the account's OPEN tasks, before them (`!tally`).
 */
export const taskAccountTallyEntity = () =>
  new Entity({
    model: { entity: "taskaccounttally", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      open: { type: "number", required: true, default: 0 },
      completed: { type: "number", required: true, default: 0 },
      cancelled: { type: "number", required: true, default: 0 },
      recoveryOpen: { type: "number", required: true, default: 0 },
      recoveryCompleted: { type: "number", required: true, default: 0 },
      recoveryCancelled: { type: "number", required: true, default: 0 },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#tasktally", casing: "none" },
        sk: { field: "sk", composite: [], template: "account", casing: "none" },
      },
      openTasks: {
        index: "gsi2",
        pk: { field: "gsi2pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#tasks#open", casing: "none" },
        sk: { field: "gsi2sk", composite: [], template: "!tally", casing: "none" },
      },
    },
  });
