import { Entity } from "electrodb";
import { taskAttributes } from "./task.js";

/**
 * A copy of a task under the record it links (a customer, an item...), written in the same
 * transaction as the task: the partition of a record lists its tasks by status and deadline
 * (`linkKey` = `<status>#<listKey>`) with everything a list page shows, in one Query. The
 * stream processor also finds a record's tasks here when the record changes.
 */
export const taskLinkEntity = () =>
  new Entity({
    model: { entity: "tasklink", version: "1", service: "inv" },
    attributes: {
      ...taskAttributes,
      recordType: { type: "string", required: true },
      recordId: { type: "string", required: true },
      linkKey: { type: "string", required: true },
    },
    indexes: {
      primary: {
        pk: {
          field: "pk",
          composite: ["accountId", "recordType", "recordId"],
          template: "$inv#accountid_${accountId}#tasklinks#${recordType}_${recordId}",
          casing: "none",
        },
        sk: { field: "sk", composite: ["linkKey"], template: "${linkKey}", casing: "none" },
      },
    },
  });
