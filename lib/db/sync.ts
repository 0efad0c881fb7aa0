import { batchGetAll } from "./batch-get.js";
import { db, type SyncMarkerItem } from "./service.js";
import { Cancellation, writeTransaction } from "./transactions.js";
import { RETRY, retrying, type RetryPolicy } from "./retry.js";
import { ContentionError } from "../core/errors.js";
import type { RecordChange } from "../sync/changes.js";

/** Storage of the change feed (design: docs/sync.md). */
export const RETENTION_DAYS = 90;
const RETENTION_SECONDS = RETENTION_DAYS * 24 * 3600;
export const seqKey = (seq: number) => String(seq).padStart(15, "0");
export const secondKey = (second: number) => String(second).padStart(12, "0");

/** The sequences a restore skipped (see `restoreGaps` on the sync head entity). */
export interface RestoreGap {
  table: string;
  after: number;
  upTo: number;
}

export async function readHead(accountId: string): Promise<{ seq: number; lastAt: number; restoreGaps: RestoreGap[] }> {
  const { data } = await db().entities.syncHead.get({ accountId }).go({ consistent: true });
  return { seq: data?.seq ?? 0, lastAt: data?.lastAt ?? 0, restoreGaps: data?.restoreGaps ?? [] };
}

/** Markers with sequence in (after, upTo], in order, at most `limit`: ONE consistent Query. */
export async function queryMarkers(accountId: string, after: number, upTo: number, limit: number): Promise<SyncMarkerItem[]> {
  if (upTo <= after) return [];
  const { data } = await db()
    .entities.syncMarker.query.primary({ accountId })
    .between({ seqKey: seqKey(after + 1) }, { seqKey: seqKey(upTo) })
    .go({ consistent: true, limit, pages: 1 });
  return data;
}

/** The first sequence written at or after an epoch second (undefined when none yet). */
export async function firstSequenceSince(accountId: string, second: number): Promise<number | undefined> {
  const { data } = await db()
    .entities.syncCheckpoint.query.primary({ accountId })
    .gte({ secondKey: secondKey(second) })
    .go({ consistent: true, limit: 1, pages: 1 });
  return data[0]?.firstSeq;
}

/** A marker as written (or a delete found already written): its sequence and time (epoch ms). */
export interface WrittenMarker extends RecordChange {
  seq: number;
  at: number;
}

/** Statistics of one marker write, for the benchmark and the logs, and the markers written. */
export interface MarkerWriteStats {
  transactions: number;
  conflicts: number;
  markers: number;
  written: WrittenMarker[];
}

const MARKERS_PER_TRANSACTION = 25;
/** The stream processor has time: it outlasts long bursts of concurrent batches. */
const MARKER_POLICY: RetryPolicy = { attempts: 60, baseMs: 5, capMs: 200 };

/**
 * Writes the markers of one account's changes: per group of up to 25 records, ONE transaction
 * moves the head from `n` to `n + k` on condition that it is still `n`, puts markers
 * `n+1..n+k`, deletes each record's previous marker and moves its pointer (on condition that
 * the pointer is unchanged), and records the checkpoint of a new second. A record whose
 * pointer says `delete` gets no more markers. On any conflict it reads again and retries.
 */
export async function writeMarkers(accountId: string, changes: readonly RecordChange[], now = () => Date.now()): Promise<MarkerWriteStats> {
  const stats: MarkerWriteStats = { transactions: 0, conflicts: 0, markers: 0, written: [] };
  for (let start = 0; start < changes.length; start += MARKERS_PER_TRANSACTION) {
    const group = changes.slice(start, start + MARKERS_PER_TRANSACTION);
    await retrying(
      "sync head",
      async () => {
        const [head, pointers] = await Promise.all([
          readHead(accountId),
          batchGetAll(
            "read sync pointers",
            group.map((c): { accountId: string; resource: string; recordId: string } => ({ accountId, resource: c.resource, recordId: c.recordId })),
            (chunk) => db().entities.syncPointer.get(chunk).go({ consistent: true }),
          ),
        ]);
        const pointerOf = new Map(pointers.map((p) => [`${p.resource}|${p.recordId}`, p]));
        // The two reads ran in parallel: a pointer newer than the head read means another writer
        // committed in between. Read again rather than build a transaction on a stale head.
        if (pointers.some((p) => p.seq > head.seq)) {
          stats.conflicts += 1;
          return RETRY;
        }
        const live = group.filter((c) => pointerOf.get(`${c.resource}|${c.recordId}`)?.operation !== "delete");
        // A delete already in the feed (a retried batch whose first attempt wrote it) is reported
        // again as written, with its sequence: what fans it out (webhooks) then makes the same
        // message as before, which the first attempt may not have sent.
        const deletedBefore = group.flatMap((change) => {
          const pointer = pointerOf.get(`${change.resource}|${change.recordId}`);
          return change.operation === "delete" && pointer?.operation === "delete" ? [{ ...change, seq: pointer.seq, at: now() }] : [];
        });
        if (live.length === 0) {
          stats.written.push(...deletedBefore);
          return true;
        }
        const at = Math.max(now(), head.lastAt);
        const expiresAt = Math.floor(at / 1000) + RETENTION_SECONDS;
        const second = Math.floor(at / 1000);
        const newSecond = second > Math.floor(head.lastAt / 1000);
        const from = head.seq;
        let failed: Cancellation | null;
        try {
          failed = await writeTransaction((tx) => {
            const e = tx.entities;
            tx.add(
              "head",
              e.syncHead
                .update({ accountId })
                .set({ seq: from + live.length, lastAt: at })
                .where(({ seq }, { eq, notExists }) => (from === 0 ? notExists(seq) : eq(seq, from)))
                .commit(),
            );
            live.forEach((change, i) => {
              const seq = from + i + 1;
              const pointer = pointerOf.get(`${change.resource}|${change.recordId}`);
              tx.add(
                "marker",
                e.syncMarker
                  .put({
                    accountId,
                    seqKey: seqKey(seq),
                    seq,
                    resource: change.resource,
                    recordId: change.recordId,
                    operation: change.operation,
                    at,
                    expiresAt,
                  })
                  .commit(),
              );
              if (pointer) tx.add("previous marker", e.syncMarker.delete({ accountId, seqKey: seqKey(pointer.seq) }).commit());
              tx.add(
                "pointer",
                e.syncPointer
                  .put({ accountId, resource: change.resource, recordId: change.recordId, seq, operation: change.operation, expiresAt })
                  .where((attributes, { eq, notExists }) => (pointer ? eq(attributes.seq, pointer.seq) : notExists(attributes.seq)))
                  .commit(),
              );
            });
            if (newSecond) {
              tx.add(
                "checkpoint",
                e.syncCheckpoint
                  .put({ accountId, secondKey: secondKey(second), firstSeq: from + 1, expiresAt })
                  .where(({ firstSeq }, { notExists }) => notExists(firstSeq))
                  .commit(),
              );
            }
          });
        } catch (error) {
          if (!(error instanceof ContentionError)) throw error;
          failed = new Cancellation([]); // other writers kept colliding: read again
        }
        stats.transactions += 1;
        if (!failed) {
          stats.markers += live.length;
          stats.written.push(...deletedBefore, ...live.map((change, i) => ({ ...change, seq: from + i + 1, at })));
          return true;
        }
        stats.conflicts += 1;
        return RETRY;
      },
      MARKER_POLICY,
      [`sync-head:${accountId}`],
    );
  }
  return stats;
}
