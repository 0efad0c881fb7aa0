/**
 * The change feed (architecture section 6; design in docs/sync.md). Per account:
 * - `SyncHead`: the last marker sequence `seq` and the time of the last marker.
 * - `SyncMarker`: one per sequence number (compacted: one live marker per record).
 * - `SyncPointer`: record -> its current marker sequence (and whether it was deleted).
 * - `SyncCheckpoint`: epoch second -> first sequence written in that second (for `since`).
 * All of them are written by ONE transaction per batch that moves the head on condition, so
 * every marker up to the head is committed when the head says so. Each carries this TTL.
 */
export const RETENTION = { expiresAt: { type: "number" as const, required: true as const, field: "expires_at" } };
