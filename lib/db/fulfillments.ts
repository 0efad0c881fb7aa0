import { db, type FulfillmentItem } from "./service.js";

/** Packing lists of a document (`lib/db/entities/fulfillment.ts`). */

/** Every fulfillment of a document, newest number first (one Query of its partition). */
export async function queryFulfillments(accountId: string, documentId: string): Promise<FulfillmentItem[]> {
  const { data } = await db().entities.fulfillment.query.primary({ accountId, documentId }).go({ pages: "all", consistent: true });
  return [...data].sort((a, b) => b.number - a.number);
}

export async function readFulfillment(accountId: string, documentId: string, fulfillmentId: string): Promise<FulfillmentItem | undefined> {
  const { data } = await db().entities.fulfillment.get({ accountId, documentId, fulfillmentId }).go({ consistent: true });
  return data ?? undefined;
}

/** The label of a fulfillment in a transaction. */
export const FULFILLMENT_LABEL = "fulfillment";
