import { Entity } from "electrodb";

/** A unit of measure (`unit_id` is an integer from the account's sequence). */
export const unitEntity = () =>
  new Entity({
    model: { entity: "unit", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      unitId: { type: "number", required: true, readOnly: true },
      name: { type: "string", required: true },
      createdAt: { type: "string", required: true, readOnly: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["unitId"] },
      },
    },
  });
