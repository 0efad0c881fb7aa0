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
}

/** Secondary indexes: one per ordering that a list endpoint serves. */
export const GLOBAL_INDEXES: readonly GlobalIndexDefinition[] = [
  { indexName: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk" },
  { indexName: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk" },
];

/** The table name: `TABLE_NAME` in every environment, with a local default. */
export function tableName(): string {
  return process.env.TABLE_NAME ?? "inventory-api-local";
}
