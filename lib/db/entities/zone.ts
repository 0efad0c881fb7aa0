import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/** A zone inside a location; stored in its location's partition (collection `locationTree`). */
export const zoneEntity = () =>
  new Entity({
    model: { entity: "zone", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      locationId: { type: "string", required: true, readOnly: true },
      zoneId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      shortName: { type: "string", required: true },
      description: { type: "string" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        collection: "locationTree",
        pk: { field: "pk", composite: ["accountId", "locationId"] },
        sk: { field: "sk", composite: ["zoneId"] },
      },
    },
  });
