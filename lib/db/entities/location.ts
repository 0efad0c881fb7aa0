import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * An inventory location. It shares its partition with its zones (collection `locationTree`),
 * so one Query returns a location together with all of its zones. `gsi1` lists the account's
 * locations ordered by name.
 */
export const locationEntity = () =>
  new Entity({
    model: { entity: "location", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      locationId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      /** Lower-cased name: the sort key of the by-name index. */
      nameKey: { type: "string", required: true },
      shortName: { type: "string", required: true },
      address1: { type: "string" },
      address2: { type: "string" },
      city: { type: "string" },
      region: { type: "string" },
      country: { type: "string" },
      postalCode: { type: "string" },
      manager: { type: "string" },
      phone: { type: "string" },
      fax: { type: "string" },
      email: { type: "string" },
      active: { type: "boolean", required: true, default: true },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        collection: "locationTree",
        pk: { field: "pk", composite: ["accountId", "locationId"] },
        sk: { field: "sk", composite: [] },
      },
      byName: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId"] },
        sk: { field: "gsi1sk", composite: ["nameKey", "locationId"] },
      },
    },
  });
