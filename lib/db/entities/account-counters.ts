import { Entity } from "electrodb";

/**
 * Per-account sequences and record counts, written in the same transaction as the record they
 * number or count: a failed write consumes no number, and list totals never need a count of
 * the records themselves. Customers and prospects share `customerSeq`.
 */
export const accountCountersEntity = () =>
  new Entity({
    model: { entity: "counters", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      customerSeq: { type: "number" },
      supplierSeq: { type: "number" },
      customerCount: { type: "number" },
      prospectCount: { type: "number" },
      supplierCount: { type: "number" },
      contactCount: { type: "number" },
      /** Webhook endpoints (at most 10 per account). */
      webhookEndpointCount: { type: "number" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
