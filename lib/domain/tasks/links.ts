import { RETRY, retrying } from "../../db/retry.js";
import { queryAssigneeTasks, queryRecordTasks, readTask, writeTask } from "../../db/tasks.js";
import type { TaskItem } from "../../db/service.js";
import { ENTITY_ATTRIBUTE } from "../../sync/classify.js";
import { prospectConversionOf } from "../records/parties.js";
import { resolverOf, storedLink, TASK_RECORD_TYPES, type RecordSnapshot, type StoredRecordLink, type TaskRecordType } from "./records.js";
import { tallyChanges, type TallyState } from "./tallies.js";

/**
 * Keeps the snapshots tasks hold (assignee name and active state, linked record name and
 * number) current: the stream processor hands every changed table item here; a change of a
 * user (name, status, removal) or of a linked record (name, removal) rewrites the snapshots of
 * the tasks concerned. Neither the task's version nor its activity moves (the task did not
 * change); the account tally's recovery counts move with the assignee's active state.
 * Idempotent: applying a change again writes nothing.
 */
export type TaskLinkChange =
  | { kind: "user"; accountId: string; userId: string; name: string; active: boolean }
  | { kind: "record"; accountId: string; type: TaskRecordType; id: string; snapshot: RecordSnapshot | null }
  /** A prospect became a customer (same record): its tasks link the customer from now on. */
  | { kind: "converted"; accountId: string; id: string; snapshot: RecordSnapshot };

/** The change a stream record means for task snapshots, if any. */
export function taskLinkChangeOf(
  eventName: string | undefined,
  image: Record<string, unknown> | undefined,
  oldImage: Record<string, unknown> | undefined,
): TaskLinkChange | undefined {
  const current = image ?? oldImage;
  const entity = current?.[ENTITY_ATTRIBUTE];
  if (typeof entity !== "string" || !current) return undefined;
  const removed = eventName === "REMOVE" || !image;
  if (entity === "user") {
    if (eventName === "INSERT") return undefined;
    const active = !removed && current.status === "active";
    if (!removed && oldImage && oldImage.name === current.name && oldImage.status === current.status) return undefined;
    return { kind: "user", accountId: String(current.accountId), userId: String(current.userId), name: String(current.name), active };
  }
  const conversion = removed ? undefined : prospectConversionOf(image, oldImage);
  if (conversion) {
    const snapshot = { name: String(current.name), number: Number(current.number), ownerUserId: String(current.ownerUserId) };
    return { kind: "converted", accountId: conversion.accountId, id: conversion.partyId, snapshot };
  }
  for (const type of TASK_RECORD_TYPES) {
    const change = resolverOf(type)?.changeOf?.(entity, current, removed ? undefined : oldImage, removed);
    if (change) return { kind: "record", type, ...change };
  }
  return undefined;
}

const keyOf = (change: TaskLinkChange) =>
  change.kind === "user"
    ? `user|${change.accountId}|${change.userId}`
    : change.kind === "converted"
      ? `converted|${change.accountId}|${change.id}`
      : `record|${change.accountId}|${change.type}|${change.id}`;

const tallyState = (task: TaskItem): TallyState => ({
  status: task.status,
  assigneeUserId: task.assigneeUserId,
  assigneeActive: task.assigneeActive,
  reminder: task.reminder && { ...task.reminder },
});

/** Rewrites one task's snapshots with `refresh` (undefined: nothing to change), conditioned on its rev. */
async function refreshTask(accountId: string, taskId: string, refresh: (task: TaskItem) => Partial<TaskItem> | undefined): Promise<void> {
  await retrying(
    "refresh task snapshot",
    async () => {
      const task = await readTask(accountId, taskId);
      if (!task) return true;
      const changes = refresh(task);
      if (!changes) return true;
      const next = { ...task, ...changes, rev: task.rev + 1 } as TaskItem;
      const { users, account } = tallyChanges(tallyState(task), tallyState(next));
      return (await writeTask({ before: task, after: next, users, account }, undefined)) === "ok" ? true : RETRY;
    },
    undefined,
    [`task:${accountId}:${taskId}`, `tasks:${accountId}`],
  );
}

const sameLink = (a: StoredRecordLink | undefined, b: StoredRecordLink) =>
  a !== undefined && a.state === b.state && a.name === b.name && a.number === b.number && a.ownerUserId === b.ownerUserId;

/** Applies the changes of one stream batch (the last change of each user or record wins). */
export async function applyTaskLinkChanges(changes: readonly TaskLinkChange[]): Promise<number> {
  const latest = new Map<string, TaskLinkChange>();
  for (const change of changes) {
    latest.delete(keyOf(change));
    latest.set(keyOf(change), change);
  }
  // Each user or record is looked up at once (a batch of new items is as many Queries, which
  // one after another held the stream back); a task two of them touch is refreshed by
  // refreshTask's conditional write, whichever comes first.
  const refreshed = await Promise.all(
    [...latest.values()].map(async (change): Promise<number> => {
      let count = 0;
      if (change.kind === "user") {
        const tasks = await queryAssigneeTasks(change.accountId, change.userId);
        for (const task of tasks) {
          if (task.assigneeName === change.name && task.assigneeActive === change.active) continue;
          count++;
          await refreshTask(change.accountId, task.taskId, (current) =>
            current.assigneeUserId !== change.userId || (current.assigneeName === change.name && current.assigneeActive === change.active)
              ? undefined
              : { assigneeName: change.name, assigneeActive: change.active },
          );
        }
      } else if (change.kind === "converted") {
        // The tasks move to the customer's partition (writeTask moves each link copy).
        const link = storedLink("customer", change.id, change.snapshot);
        for (const task of await queryRecordTasks(change.accountId, "prospect", change.id)) {
          count++;
          await refreshTask(change.accountId, task.taskId, (current) =>
            current.record?.type !== "prospect" || current.record.id !== change.id ? undefined : { record: link as TaskItem["record"] },
          );
        }
      } else {
        const link = storedLink(change.type, change.id, change.snapshot);
        const tasks = await queryRecordTasks(change.accountId, change.type, change.id);
        for (const task of tasks) {
          if (sameLink(task.record as StoredRecordLink | undefined, link)) continue;
          count++;
          await refreshTask(change.accountId, task.taskId, (current) =>
            current.record?.type !== change.type || current.record.id !== change.id || sameLink(current.record as StoredRecordLink, link)
              ? undefined
              : { record: link as TaskItem["record"] },
          );
        }
      }
      return count;
    }),
  );
  return refreshed.reduce((sum, count) => sum + count, 0);
}
