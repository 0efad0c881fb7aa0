import { Entity } from "electrodb";

/** Per-user counts of the records a user owns (the list totals of users without `records.view_all`). */
export const ownerCountersEntity = () =>
  new Entity({
    model: { entity: "ownercounters", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      userId: { type: "string", required: true, readOnly: true },
      customerCount: { type: "number" },
      prospectCount: { type: "number" },
      supplierCount: { type: "number" },
      /** Contacts linked to at least one record this user owns. */
      contactCount: { type: "number" },
      /** Documents assigned to this user, by kind (moved in the documents' own transactions). */
      purchaseOrderCount: { type: "number" },
      stockTransferCount: { type: "number" },
      estimateCount: { type: "number" },
      salesOrderCount: { type: "number" },
      invoiceCount: { type: "number" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["userId"] },
      },
    },
  });
