import type { RouteDefinition } from "../lib/routes/index.js";

/**
 * DynamoDB actions per function, derived from the route table (one policy per function).
 *
 * - Reads: GetItem (also covers the items of TransactGetItems), BatchGetItem, Query.
 * - Every authenticated request counts itself against its API key's rate window with one
 *   UpdateItem on the key item (`lib/db/auth-store.ts`), so even a group whose routes are all
 *   GET needs UpdateItem on the table.
 * - Writes: PutItem, UpdateItem, DeleteItem, ConditionCheckItem. TransactWriteItems has no IAM
 *   action of its own: DynamoDB authorises each item of a transaction with its per-item action.
 *   Idempotency records (put, completed or released) ride on the same actions.
 * - Indexes are only ever queried: they get Query and nothing else.
 * Never: Scan, BatchWriteItem, PartiQL, or any table administration.
 */
export const READ_ACTIONS = ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"] as const;
/** The rate-window count of every authenticated request. */
export const RATE_WINDOW_ACTIONS = ["dynamodb:UpdateItem"] as const;
export const WRITE_ACTIONS = ["dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"] as const;
export const INDEX_ACTIONS = ["dynamodb:Query"] as const;

export interface TableAccess {
  /** Actions on the table itself. */
  table: string[];
  /** Actions on its global secondary indexes. */
  indexes: string[];
}

const sorted = (actions: Iterable<string>) => [...new Set(actions)].sort();

/**
 * What a function serving these routes may do on the table: nothing when none of them is
 * authenticated (public documents only); reads plus the rate-window update when they are all
 * GET; reads and writes otherwise.
 */
export function tableAccessOf(routes: readonly Pick<RouteDefinition, "method" | "authenticated">[]): TableAccess | undefined {
  if (!routes.some((route) => route.authenticated)) return undefined;
  const writes = routes.some((route) => route.method !== "GET");
  return {
    table: sorted(writes ? [...READ_ACTIONS, ...WRITE_ACTIONS] : [...READ_ACTIONS, ...RATE_WINDOW_ACTIONS]),
    indexes: sorted(INDEX_ACTIONS),
  };
}

/**
 * The stream processor writes sync markers, heads, pointers and checkpoints, and finishes
 * interrupted stock journals (reads and writes stock like the API does).
 */
export const STREAM_PROCESSOR_ACCESS: TableAccess = {
  table: sorted([...READ_ACTIONS, ...WRITE_ACTIONS]),
  indexes: sorted(INDEX_ACTIONS),
};

/**
 * The webhook delivery function reads the endpoint and its user's permissions, records each
 * attempt (a delivery record and its day count, both expiring), and updates the endpoint (its
 * count of consecutive failed messages; disabling it as `failing` or `permission_revoked`).
 * Index Query as for the stream processor: it reads nothing through an index that a Query on
 * the table could not read.
 */
export const WEBHOOK_DELIVERY_ACCESS: TableAccess = {
  table: sorted([...READ_ACTIONS, ...WRITE_ACTIONS]),
  indexes: sorted(INDEX_ACTIONS),
};

/**
 * Whether a function serving these routes puts messages on the webhook queue (a route with
 * `enqueuesWebhooks`): it then gets `sqs:SendMessage` on that queue and `WEBHOOK_QUEUE_URL`.
 */
export function enqueuesWebhooks(routes: readonly Pick<RouteDefinition, "enqueuesWebhooks">[]): boolean {
  return routes.some((route) => route.enqueuesWebhooks === true);
}
