import { Entity } from "electrodb";

/**
 * That a document references an item (its lines name it), in the item's partition. Written by
 * the stream processor from document headers' `itemIds`; each transition (active or not) moves
 * the item's `documentCount` in the same transaction, exactly once, and never backwards: `at` is
 * the document's `updatedAt` the state comes from, and an older image changes nothing. Inactive
 * references stay as tombstones (expiring after 30 days) so a late, older image cannot bring a
 * reference back.
 */
export const itemReferenceEntity = () =>
  new Entity({
    model: { entity: "itemreference", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      itemId: { type: "string", required: true, readOnly: true },
      documentId: { type: "string", required: true, readOnly: true },
      active: { type: "boolean", required: true },
      at: { type: "string", required: true },
      expiresAt: { type: "number", field: "expires_at" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "itemId"] },
        sk: { field: "sk", composite: ["documentId"] },
      },
    },
  });
