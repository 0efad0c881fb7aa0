import { Entity } from "electrodb";

/**
 * Account reference data that records point at. Operators create it with the admin CLI;
 * writes check references with a ConditionCheck on these keys, inside the write's transaction.
 */
export const CUSTOM_FIELD_KINDS = [
  "customer",
  "prospect",
  "supplier",
  "contact",
  "item",
  "estimate",
  "invoice",
  "sales_order",
  "purchase_order",
  "stock_transfer",
  "task",
] as const;
export type CustomFieldKind = (typeof CUSTOM_FIELD_KINDS)[number];

/** A custom-field definition of one record kind. */
export const customFieldEntity = () =>
  new Entity({
    model: { entity: "customfield", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      kind: { type: CUSTOM_FIELD_KINDS, required: true, readOnly: true },
      customFieldId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      createdAt: { type: "string", required: true, readOnly: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["kind", "customFieldId"] },
      },
    },
  });
