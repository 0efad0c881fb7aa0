import { Entity } from "electrodb";

/** A pricing tier (`pricing_tier_id` of customers and prospects). */
export const pricingTierEntity = () =>
  new Entity({
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
