import { TIMESTAMP_ATTRIBUTES } from "./timestamps.js";
import { Entity } from "electrodb";

/**
 * A fulfillment (packing list) of a sales order or a standalone invoice (spec part 2, sections
 * 2.4 and 4.5): numbered from the account's `packing_list` sequence, `packed` until a shipped
 * date is recorded, then `shipped`. `lines` is the historical snapshot of what was packed
 * (`{lineId, quantity}` of the document's lines).
 *
 * It lives in its document's partition but outside the `documentTree` collection, so reading a
 * document (one Query of that collection) never reads its packing lists; the fulfillments list
 * is a Query of this entity in the partition, and a ship reads one by key.
 */
export const fulfillmentEntity = () =>
  new Entity({
    model: { entity: "fulfillment", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      documentId: { type: "string", required: true, readOnly: true },
      fulfillmentId: { type: "string", required: true, readOnly: true },
      documentKind: { type: ["sales_order", "invoice"] as const, required: true, readOnly: true },
      number: { type: "number", required: true, readOnly: true },
      status: { type: ["packed", "shipped"] as const, required: true },
      unitsPacked: { type: "number", required: true, readOnly: true },
      shippedDate: { type: "string" },
      carrier: { type: "string" },
      trackingNumber: { type: "string" },
      trackingUrl: { type: "string" },
      trackingStatus: { type: "string" },
      trackingStatusDetails: { type: "string" },
      estimatedDeliveryDate: { type: "string" },
      trackingUpdatedAt: { type: "string" },
      lines: {
        type: "list",
        required: true,
        readOnly: true,
        items: { type: "map", properties: { lineId: { type: "string", required: true }, quantity: { type: "number", required: true } } },
      },
      ...TIMESTAMP_ATTRIBUTES,
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "documentId"] },
        sk: { field: "sk", composite: ["fulfillmentId"] },
      },
    },
  });
