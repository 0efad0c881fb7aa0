import { Entity } from "electrodb";

/**
 * A task's reminder, by its id (the path of reminder actions), with the task summary its
 * recipient's inbox shows. One per task: each new occurrence (a snooze, a new `reminder_at`,
 * a reassignment) overwrites it with the next `generation`. The inbox index (gsi1, by
 * recipient, newest `scheduledAt` first) is sparse: a reminder is in its recipient's inbox
 * while scheduled or read; dismissed and completed ones leave it.
 */
export const taskReminderEntity = () =>
  new Entity({
    model: { entity: "taskreminder", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      reminderId: { type: "string", required: true, readOnly: true },
      taskId: { type: "string", required: true, readOnly: true },
      recipientUserId: { type: "string", required: true },
      generation: { type: "number", required: true },
      status: { type: ["scheduled", "read", "dismissed", "completed"] as const, required: true },
      scheduledAt: { type: "string", required: true },
      readAt: { type: "string" },
      /** `<scheduledAt>#<reminderId>`: the inbox order. */
      inboxKey: { type: "string", required: true },
      /** The task as the inbox shows it (kept current by every task write). */
      taskTitle: { type: "string", required: true },
      taskStatus: { type: "string", required: true },
      taskVersion: { type: "number", required: true },
      taskDueDate: { type: "string" },
      taskDueTime: { type: "string" },
      taskDueAt: { type: "string" },
      taskTimeZone: { type: "string", required: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "reminderId"], template: "$inv#accountid_${accountId}#taskreminder_${reminderId}", casing: "none" },
        sk: { field: "sk", composite: [], template: "reminder", casing: "none" },
      },
      inbox: {
        index: "gsi1",
        condition: (attributes: Record<string, unknown>) => attributes.status === "scheduled" || attributes.status === "read",
        pk: {
          field: "gsi1pk",
          composite: ["accountId", "recipientUserId"],
          template: "$inv#accountid_${accountId}#taskinbox_${recipientUserId}",
          casing: "none",
        },
        sk: { field: "gsi1sk", composite: ["inboxKey"], template: "${inboxKey}", casing: "none" },
      },
    },
  });
