import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * A user of an account. The record lives in its account's partition, so moving a user to
 * another account moves the record, and keys minted under the old account stop resolving.
 */
export const userEntity = () =>
  new Entity({
    model: { entity: "user", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true },
      userId: { type: "string", required: true, readOnly: true },
      name: { type: "string", required: true },
      email: { type: "string" },
      role: { type: ["owner", "staff"] as const, required: true, default: "staff" },
      /** Permission names granted to a staff user (owners hold every permission). */
      permissions: { type: "set", items: "string" },
      assignedLocationId: { type: "string" },
      status: { type: ["active", "inactive"] as const, required: true, default: "active" },
      timeZone: { type: "string" },
      /** Keys created before this instant are void (set when the user moves to another account). */
      keysNotBefore: { type: "string" },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: ["userId"] },
      },
    },
  });
