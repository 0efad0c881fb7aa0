import { Entity } from "electrodb";

/** A label that customers and prospects can carry (`customer_label_id`). */
export const customerLabelEntity = () =>
  new Entity({
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
