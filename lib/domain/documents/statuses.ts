/**
 * Every document status id in one table (the spec's ids for estimates, invoices, purchase orders
 * and stock transfers; architecture section 8 for sales orders), so no two kinds can claim one
 * id. Each kind's model names its own row (`INVOICE_STATUS`, ...); `status_id` and `status` are
 * the `id` and `label` of the stored status.
 */

/** A kind's statuses written as `{ name: [id, label] }`, read as `{ name: { id, label } }`. */
const statuses = <const T extends Record<string, readonly [number, string]>>(table: T) =>
  Object.fromEntries(Object.entries(table).map(([name, [id, label]]) => [name, { id, label }])) as { [K in keyof T]: { id: T[K][0]; label: T[K][1] } };

export const DOCUMENT_STATUS = {
  estimate: statuses({ open: [5, "Open"], closed: [6, "Closed"], declined: [7, "Declined"], expired: [8, "Expired"] }),
  invoice: statuses({ sent: [9, "Sent"], partially_paid: [10, "Partially Paid"], paid: [11, "Paid"], cancelled: [12, "Cancelled"] }),
  purchase_order: statuses({ not_sent: [21, "Not Sent"], sent: [22, "Sent"], partially_received: [23, "Partially Received"], received: [24, "Received"] }),
  stock_transfer: statuses({ pending: [26, "Pending"], in_transit: [27, "In Transit"], transferred: [28, "Transferred"] }),
  sales_order: statuses({ open: [29, "Open"], closed: [30, "Closed"], cancelled: [31, "Cancelled"] }),
} as const;
