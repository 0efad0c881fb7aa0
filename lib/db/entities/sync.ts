import { Entity } from "electrodb";

/**
 * The change feed (architecture section 6; design in docs/sync.md). Per account:
 * - `SyncHead`: the last marker sequence `seq` and the time of the last marker.
 * - `SyncMarker`: one per sequence number (compacted: one live marker per record).
 * - `SyncPointer`: record -> its current marker sequence (and whether it was deleted).
 * - `SyncCheckpoint`: epoch second -> first sequence written in that second (for `since`).
 * All of them are written by ONE transaction per batch that moves the head on condition, so
 * every marker up to the head is committed when the head says so.
 */
const RETENTION = { expiresAt: { type: "number" as const, required: true as const, field: "expires_at" } };

export const SyncHead = new Entity({
  model: { entity: "synchead", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    seq: { type: "number", required: true },
    /** Epoch milliseconds of the last marker (markers' times never go backwards). */
    lastAt: { type: "number", required: true },
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#sync" },
      sk: { field: "sk", composite: [], template: "head" },
    },
  },
});

export const SyncMarker = new Entity({
  model: { entity: "syncmarker", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    /** Zero-padded sequence: the sort key orders markers by sequence. */
    seqKey: { type: "string", required: true, readOnly: true },
    seq: { type: "number", required: true },
    resource: { type: "string", required: true },
    recordId: { type: "string", required: true },
    operation: { type: ["upsert", "delete"] as const, required: true },
    at: { type: "number", required: true },
    ...RETENTION,
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#syncmarkers" },
      sk: { field: "sk", composite: ["seqKey"], template: "${seqKey}" },
    },
  },
});

export const SyncPointer = new Entity({
  model: { entity: "syncpointer", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    resource: { type: "string", required: true, readOnly: true },
    recordId: { type: "string", required: true, readOnly: true },
    seq: { type: "number", required: true },
    operation: { type: ["upsert", "delete"] as const, required: true },
    ...RETENTION,
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId", "resource", "recordId"], template: "$inv#accountid_${accountId}#syncpointer#${resource}#${recordId}" },
      sk: { field: "sk", composite: [], template: "pointer" },
    },
  },
});

export const SyncCheckpoint = new Entity({
  model: { entity: "synccheckpoint", version: "1", service: "inv" },
  attributes: {
    accountId: { type: "string", required: true, readOnly: true },
    /** Zero-padded epoch second. */
    secondKey: { type: "string", required: true, readOnly: true },
    firstSeq: { type: "number", required: true },
    ...RETENTION,
  },
  indexes: {
    primary: {
      pk: { field: "pk", composite: ["accountId"], template: "$inv#accountid_${accountId}#synccheckpoints" },
      sk: { field: "sk", composite: ["secondKey"], template: "${secondKey}" },
    },
  },
});
