/**
 * The single DynamoDB table, described once as plain data. The CDK stack (infra/) and the
 * local stack (scripts/local) both build the table from this description, so the deployed
 * and the local table can never drift apart.
 */
export const TABLE_KEYS = {
  partitionKey: "pk",
  sortKey: "sk",
  /** Epoch seconds; DynamoDB TTL deletes idempotency records, markers and checkpoints. */
  timeToLiveAttribute: "expires_at",
} as const;

export interface GlobalIndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey: string;
  /** What the index holds besides the keys: every attribute (the default), only those named, or nothing. */
  projection?: { type: "ALL" } | { type: "INCLUDE"; attributes: readonly string[] } | { type: "KEYS_ONLY" };
}

/**
 * The one attribute the list indexes project besides the keys: a compact JSON text of what a
 * list filters on (`lib/db/listing.ts`), so a filter read never reads a whole record.
 */
export const LISTING_FACTS = "lxf";
/** The smaller facts text `lx1` (every record of a kind: text search) projects instead: numbers, names, dates. */
export const LISTING_NAMES = "lxn";

/**
 * The list indexes (`lib/db/listing.ts`): sparse and overloaded, each partition key a string
 * that starts with the account, e.g. `<account>#invoice#s#9` (invoices with status 9); all sort
 * by `lxsk` (a document's zero-padded number, a record's name key), but `lx7`, whose sort key
 * `lx7sk` starts with a date. Projection: the keys and `lxf` only (`lx1`: `lxn`).
 */
const LIST_INDEXES: readonly GlobalIndexDefinition[] = [1, 2, 3, 4, 5, 6, 7].map((n) => ({
  indexName: `lx${n}`,
  partitionKey: `lx${n}pk`,
  sortKey: n === 7 ? "lx7sk" : "lxsk",
  projection: { type: "INCLUDE", attributes: [n === 1 ? LISTING_NAMES : LISTING_FACTS] },
}));

/**
 * What the name indexes (`nx1`, `nx2`) project besides their keys: the entity, the ids, the
 * searched keys, the number and the status flags of the name-ordered lists (parties, items).
 */
export const NAME_INDEX_ATTRIBUTES = ["__edb_e__", "partyId", "itemId", "emailKey", "skuKey", "number", "archived", "sold"] as const;

/**
 * The name indexes (`lib/db/name-index.ts`): the partitions of `gsi1` and `gsi2` sorted by
 * `nameKey`, with a small projection (about 200 bytes an entry), so a deep page of a
 * name-ordered list skips its offset, and a text search matches, without reading records.
 * Keyed on attributes the named records (parties, items, contacts, locations) already have,
 * and no other record has: documents, tasks and the ledger never write an entry here, and
 * nothing needs migrating.
 */
const NAME_INDEXES: readonly GlobalIndexDefinition[] = [1, 2].map((n) => ({
  indexName: `nx${n}`,
  partitionKey: `gsi${n}pk`,
  sortKey: "nameKey",
  projection: { type: "INCLUDE", attributes: NAME_INDEX_ATTRIBUTES },
}));

/**
 * The estimate expiry index (`lib/db/estimate-expiries.ts`): open estimates whose expiry moment
 * is still ahead of their last write, in one partition per UTC day of that moment, sorted by
 * it, across accounts (keys only), so the scheduled sweep finds those whose moment passed
 * without reading any account.
 */
export const EXPIRY_INDEX = {
  indexName: "ex1",
  partitionKey: "ex1pk",
  sortKey: "ex1sk",
  projection: { type: "KEYS_ONLY" },
} as const satisfies GlobalIndexDefinition;

/** Secondary indexes: one per ordering that a list endpoint serves, the list indexes, the name indexes and the expiry index. */
export const GLOBAL_INDEXES: readonly GlobalIndexDefinition[] = [
  { indexName: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk" },
  { indexName: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk" },
  ...LIST_INDEXES,
  ...NAME_INDEXES,
  EXPIRY_INDEX,
];

/** An index's projection as DynamoDB's CreateTable and UpdateTable take it. */
export function projectionOf(index: GlobalIndexDefinition): { ProjectionType: "ALL" | "INCLUDE" | "KEYS_ONLY"; NonKeyAttributes?: string[] } {
  const projection = index.projection ?? { type: "ALL" };
  if (projection.type === "INCLUDE") return { ProjectionType: "INCLUDE", NonKeyAttributes: [...projection.attributes] };
  return { ProjectionType: projection.type };
}

/** The table's name (`TABLE_NAME`, lib/core/config.ts). */
export { LOCAL_TABLE_NAME, tableName } from "../core/config.js";
