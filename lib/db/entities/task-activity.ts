import { Entity } from "electrodb";

/**
 * One event per task version (spec part 2, section 4.6, activity): the action, the actor, the
 * time and the NAMES of the fields that changed; never their values (no historical private
 * text). In the task's partition, ordered by version.
 */
export const taskActivityEntity = () =>
  new Entity({
    model: { entity: "taskactivity", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      taskId: { type: "string", required: true, readOnly: true },
      version: { type: "number", required: true, readOnly: true },
      /** Zero-padded version, the sort key. */
      versionKey: { type: "string", required: true, readOnly: true },
      action: { type: "string", required: true },
      actorUserId: { type: "string", required: true },
      changedFields: { type: "list", items: { type: "string" }, required: true },
      at: { type: "string", required: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "taskId"], template: "$inv#accountid_${accountId}#task_${taskId}", casing: "none" },
        sk: { field: "sk", composite: ["versionKey"], template: "v#${versionKey}", casing: "none" },
      },
    },
  });
