import { isDeepStrictEqual } from "node:util";
import { ENTITY_ATTRIBUTE, ITEM_CHILD_ENTITIES, SYNC_RESOURCES, type SyncResource } from "./classify.js";

/**
 * Maps changed table items (stream images) to the records of the change feed: an item or a
 * document marks itself; its children (variations, stock rows, history entries; later lines,
 * payments, fulfillments) mark their parent with `upsert`. Within one batch the last change
 * of a record wins, except that a `delete` is final: record ids are never reused, so nothing
 * after a delete can bring a record back (a child removed with its parent, or a retried older
 * stream record).
 */
export interface RecordChange {
  accountId: string;
  resource: SyncResource;
  recordId: string;
  operation: "upsert" | "delete";
}

/** Entity -> resource it marks, and the attribute holding the parent record's id. */
const PARENTS: Record<string, { resource: SyncResource; idAttribute: string; self: boolean }> = {
  item: { resource: "item", idAttribute: "itemId", self: true },
  ...Object.fromEntries(ITEM_CHILD_ENTITIES.map((entity) => [entity, { resource: "item" as const, idAttribute: "itemId", self: false }])),
};

export function changeOf(eventName: string | undefined, image: Record<string, unknown> | undefined): RecordChange | undefined {
  const entity = image?.[ENTITY_ATTRIBUTE];
  if (typeof entity !== "string") return undefined;
  if (entity === "document") {
    // Documents mark themselves as their kind; kinds that are not sync resources mark nothing.
    const kind = image?.kind;
    const accountId = image?.accountId;
    const documentId = image?.documentId;
    if (!(SYNC_RESOURCES as readonly unknown[]).includes(kind) || typeof accountId !== "string" || typeof documentId !== "string") return undefined;
    return { accountId, resource: kind as SyncResource, recordId: documentId, operation: eventName === "REMOVE" ? "delete" : "upsert" };
  }
  const parent = PARENTS[entity];
  if (!parent) return undefined;
  const accountId = image?.accountId;
  const recordId = image?.[parent.idAttribute];
  if (typeof accountId !== "string" || typeof recordId !== "string") return undefined;
  const operation = parent.self && eventName === "REMOVE" ? "delete" : "upsert";
  return { accountId, resource: parent.resource, recordId, operation };
}

/**
 * Item attributes no response shows, moved by document writes and the stream processor (the
 * references that keep an item from deletion): a change of nothing else is no change of the
 * item, for the feed and its webhooks.
 */
const ITEM_BOOKKEEPING: ReadonlySet<string> = new Set(["documentCount", "referenceTick", "referencingUntil"]);

/** Whether a stream record changes only an item's bookkeeping (`ITEM_BOOKKEEPING`). */
export function onlyItemBookkeeping(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): boolean {
  if (!before || !after || after[ENTITY_ATTRIBUTE] !== "item") return false;
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!ITEM_BOOKKEEPING.has(key) && !isDeepStrictEqual(before[key], after[key])) return false;
  }
  return true;
}

/** Compacts changes in stream order: one per record, `delete` final. */
export function compactChanges(changes: readonly RecordChange[]): RecordChange[] {
  const byRecord = new Map<string, RecordChange>();
  for (const change of changes) {
    const key = `${change.accountId}|${change.resource}|${change.recordId}`;
    const previous = byRecord.get(key);
    if (previous?.operation === "delete") continue;
    byRecord.delete(key); // re-insert: the map's order is the order of last change
    byRecord.set(key, change);
  }
  return [...byRecord.values()];
}
