import { describe, expect, it } from "vitest";
import type { DocumentItem } from "../../../db/service.js";
import { TRANSFER_STATUS, changesOf, presentStockTransfer, reversalOf, shippingChanges, type TransferLine } from "./model.js";

const line: TransferLine = { id: "l1", itemId: "i1", variationId: "v1", ivlId: 3, name: "Bolt", quantity: 5 };
const header = (status: string) => ({ status, originLocationId: "from", destinationLocationId: "to" }) as DocumentItem;

describe("offline: stock transfer model", () => {
  it("sends from the origin's on hand into the destination's in transit, and receives into its on hand", () => {
    expect(changesOf(header("pending"), [line], "send")).toEqual([
      { itemId: "i1", variationId: "v1", locationId: "from", deltas: { onHand: -5 } },
      { itemId: "i1", variationId: "v1", locationId: "to", deltas: { inTransit: 5 } },
    ]);
    expect(changesOf(header("in_transit"), [line], "receive")).toEqual([
      { itemId: "i1", variationId: "v1", locationId: "to", deltas: { inTransit: -5, onHand: 5 } },
    ]);
  });

  it("reverses nothing when pending, the send in transit, the receive then the send once transferred", () => {
    expect(reversalOf(header("pending"), [line])).toEqual([]);
    expect(reversalOf(header("in_transit"), [line])).toEqual(changesOf(header("in_transit"), [line], "send", -1));
    expect(reversalOf(header("transferred"), [line])).toEqual([
      ...changesOf(header("transferred"), [line], "receive", -1),
      ...changesOf(header("transferred"), [line], "send", -1),
    ]);
  });

  it("clears shipping fields on null or blank, keeps omitted ones, and presents the status", () => {
    const next = shippingChanges({ ...header("pending"), shippingProvider: "UPS", shippingTrackingCode: "T1" } as DocumentItem, {
      shipping_provider: "",
      estimated_arrival_date: "2026-05-01",
    });
    expect(next.shippingProvider).toBeUndefined();
    expect(next.shippingTrackingCode).toBe("T1");
    expect(next.estimatedArrivalDate).toBe("2026-05-01");
    const body = presentStockTransfer({ ...header("in_transit"), documentId: "t", number: 1 } as DocumentItem);
    expect([body.status_id, body.status]).toEqual([TRANSFER_STATUS.in_transit.id, "In Transit"]);
  });
});
