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
export const CustomField = new Entity({
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

/** A label that customers and prospects can carry (`customer_label_id`). */
export const CustomerLabel = new Entity({
  model: { entity: "customerlabel", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    labelId: { type: "string", required: true, readOnly: true },
    name: { type: "string", required: true },
    createdAt: { type: "string", required: true, readOnly: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"] },
      sk: { field: "sk", composite: ["labelId"] },
    },
  },
});

/** A pricing tier (`pricing_tier_id` of customers and prospects). */
export const PricingTier = new Entity({
  model: { entity: "pricingtier", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    pricingTierId: { type: "string", required: true, readOnly: true },
    name: { type: "string", required: true },
    createdAt: { type: "string", required: true, readOnly: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"] },
      sk: { field: "sk", composite: ["pricingTierId"] },
    },
  },
});
