import { describe, expect, it } from "vitest";
import { DOCUMENT_STATUS } from "./statuses.js";

describe("document status ids", () => {
  it("gives every status of every kind its own id, as the spec and architecture number them", () => {
    const ids = Object.values(DOCUMENT_STATUS).flatMap((kind) => Object.values(kind).map((status) => status.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(DOCUMENT_STATUS.invoice.partially_paid).toEqual({ id: 10, label: "Partially Paid" });
    expect(DOCUMENT_STATUS.sales_order).toEqual({
      open: { id: 29, label: "Open" },
      closed: { id: 30, label: "Closed" },
      cancelled: { id: 31, label: "Cancelled" },
    });
    expect(Object.keys(DOCUMENT_STATUS.purchase_order)).toEqual(["not_sent", "sent", "partially_received", "received"]);
  });
});
