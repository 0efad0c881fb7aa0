import { ENTITY_ATTRIBUTE, PLATFORM_ENTITIES } from "./classify.js";

/**
 * The Lambda event filter patterns of the stream processor's event source (infra/stack.ts), as
 * plain JSON: Lambda ORs them, and a record that matches none never invokes the processor.
 *
 * 1. Removals made by a request (a user's delete, a transaction's), never TTL expiries. A TTL
 *    deletion's stream record carries `userIdentity: {type: "Service", principalId:
 *    "dynamodb.amazonaws.com"}`, a request's deletion has no `userIdentity` at all (DynamoDB
 *    developer guide, "DynamoDB Streams and Time to Live",
 *    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html;
 *    that page also filters an event source on `userIdentity`). Every TTL'd item is internal
 *    (sync markers, pointers and checkpoints, idempotency records, webhook delivery records,
 *    turns, item references, inactive document item links), so an expiry has nothing to mark.
 *    `exists` applies to leaf nodes only, and a leaf under a missing parent is missing
 *    (Amazon SNS developer guide, "Key matching", which documents the same pattern engine:
 *    https://docs.aws.amazon.com/sns/latest/dg/attribute-key-matching.html), so
 *    `userIdentity.type: [{exists: false}]` matches exactly the records without a userIdentity.
 * 2. Inserts and changes, unless the new image is a high-churn platform record
 *    (`PLATFORM_ENTITIES`: the processor would feed itself or do nothing with it).
 */
export const STREAM_FILTER_PATTERNS: readonly Record<string, unknown>[] = [
  { eventName: ["REMOVE"], userIdentity: { type: [{ exists: false }] } },
  {
    eventName: ["INSERT", "MODIFY"],
    dynamodb: { NewImage: { [ENTITY_ATTRIBUTE]: { S: [{ "anything-but": [...PLATFORM_ENTITIES] }] } } },
  },
];
