import { batchGetAll } from "./batch-get.js";
import { QueryCommand, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { getDocumentClient } from "./client.js";
import { pagesOf } from "./pages.js";
import { isConditionalFailure } from "./dynamo-errors.js";
import {
  db,
  type TaskAccountTallyItem,
  type TaskActivityItem,
  type TaskItem,
  type TaskLinkItem,
  type TaskReminderItem,
  type TaskTallyItem,
} from "./service.js";
import { ENTITY_ATTRIBUTE } from "../core/entity-attribute.js";
import { tableName } from "./table.js";
import { referenceDetails } from "./references.js";
import { writeTransaction, type TransactionBuilder } from "./transactions.js";
import { RETRY, retrying, type RetryPolicy } from "./retry.js";
import { TransactionCanceledError } from "../core/failures.js";
import type { IdempotencyCompletion } from "../core/idempotency.js";
import type { ValidationDetail } from "../core/errors.js";

/**
 * Storage of tasks and reminders (entities `task`, `tasklink`, `taskactivity`,
 * `taskreminder`, `tasktally`, `taskaccounttally`). List reads are single Queries whose key
 * conditions and limits are built here exactly (no client-side paging behind the caller's
 * back): one page, one DynamoDB call.
 */
type Outcome = { completion: IdempotencyCompletion | undefined; body: unknown };

const prefix = (accountId: string) => `$inv#accountid_${accountId}`;
/** Sort keys of list entries start with a deadline (a digit) or `~` (undated); tallies sort before (`!tally`). */
const FIRST_ENTRY = "0";
const AFTER_LAST_ENTRY = "~~";

export async function readTask(accountId: string, taskId: string): Promise<TaskItem | undefined> {
  const { data } = await db().entities.task.get({ accountId, taskId }).go({ consistent: true });
  return data ?? undefined;
}

/** Tasks by id, ONE BatchGetItem per 100 (missing ones are absent). */
export async function readTasks(accountId: string, taskIds: readonly string[]): Promise<TaskItem[]> {
  const keys = [...new Set(taskIds)].map((taskId) => ({ accountId, taskId }));
  return batchGetAll("read tasks", keys, (chunk) => db().entities.task.get(chunk).go({ consistent: true }));
}

/** Which partition a list page reads. */
export type TaskPartition =
  | { kind: "assignee"; accountId: string; assigneeUserId: string; status: TaskItem["status"] }
  | { kind: "status"; accountId: string; status: TaskItem["status"] }
  | { kind: "record"; accountId: string; recordType: string; recordId: string; status: TaskItem["status"] };

/** Conditions DynamoDB applies to the entries it reads (a page may then hold fewer than asked). */
export interface TaskFilter {
  assigneeUserId?: string;
  /** recovery: only tasks whose assignee is no longer active */
  inactiveAssignee?: boolean;
  /** lower-cased title substring */
  titleContains?: string;
  dueFrom?: string;
  dueTo?: string;
}

export const hasFilter = (filter: TaskFilter): boolean => Object.values(filter).some((v) => v !== undefined && v !== false);

function partitionKey(partition: TaskPartition): { index?: string; pkField: string; pk: string; skField: string; skPrefix: string } {
  const p = prefix(partition.accountId);
  switch (partition.kind) {
    case "assignee":
      return { index: "gsi1", pkField: "gsi1pk", pk: `${p}#tasks#assignee_${partition.assigneeUserId}#${partition.status}`, skField: "gsi1sk", skPrefix: "" };
    case "status":
      return { index: "gsi2", pkField: "gsi2pk", pk: `${p}#tasks#${partition.status}`, skField: "gsi2sk", skPrefix: "" };
    case "record":
      return { pkField: "pk", pk: `${p}#tasklinks#${partition.recordType}_${partition.recordId}`, skField: "sk", skPrefix: `${partition.status}#` };
  }
}

function filterExpression(filter: TaskFilter): Pick<QueryCommandInput, "FilterExpression" | "ExpressionAttributeNames" | "ExpressionAttributeValues"> {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (filter.assigneeUserId !== undefined) {
    parts.push("#assignee = :assignee");
    names["#assignee"] = "assigneeUserId";
    values[":assignee"] = filter.assigneeUserId;
  }
  if (filter.inactiveAssignee) {
    parts.push("#active = :inactive");
    names["#active"] = "assigneeActive";
    values[":inactive"] = false;
  }
  if (filter.titleContains !== undefined) {
    parts.push("contains(#titleKey, :title)");
    names["#titleKey"] = "titleKey";
    values[":title"] = filter.titleContains;
  }
  if (filter.dueFrom !== undefined || filter.dueTo !== undefined) {
    names["#dueDate"] = "dueDate";
    parts.push("attribute_exists(#dueDate)");
    if (filter.dueFrom !== undefined) {
      parts.push("#dueDate >= :dueFrom");
      values[":dueFrom"] = filter.dueFrom;
    }
    if (filter.dueTo !== undefined) {
      parts.push("#dueDate <= :dueTo");
      values[":dueTo"] = filter.dueTo;
    }
  }
  if (parts.length === 0) return {};
  return { FilterExpression: parts.join(" AND "), ExpressionAttributeNames: names, ExpressionAttributeValues: values };
}

export interface TaskPage {
  /** Matching tasks in list order (at most `limit + 1`: one more tells that more follow). */
  tasks: TaskItem[];
  /**
   * Where DynamoDB stopped reading when it stopped before the partition's end (the list key
   * of the last entry it evaluated), or undefined at the end.
   */
  evaluatedTo: string | undefined;
}

/** How many entries one filtered Query examines at most (RCU stay bounded; the page may be short). */
export const FILTERED_READ = 200;

/**
 * One page of a list, in ONE Query: the entries after `after` (a list key) in list order.
 * Without filters it reads `limit + 1` entries (the extra one says whether more follow);
 * with filters it examines at most `FILTERED_READ` entries (or `limit + 1` if larger).
 */
export async function queryTaskPage(partition: TaskPartition, filter: TaskFilter, after: string | undefined, limit: number): Promise<TaskPage> {
  const key = partitionKey(partition);
  const filtered = filterExpression(filter);
  // List keys never extend one another (deadline, "#", UUID), so every key after the cursor's
  // is also after the cursor's key followed by any character: BETWEEN then starts right after it.
  const lower = after === undefined ? `${key.skPrefix}${FIRST_ENTRY}` : `${key.skPrefix}${after}~`;
  const upper = `${key.skPrefix}${AFTER_LAST_ENTRY}`;
  const input: QueryCommandInput = {
    TableName: tableName(),
    IndexName: key.index,
    KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :lower AND :upper",
    ...filtered,
    ExpressionAttributeNames: { "#pk": key.pkField, "#sk": key.skField, ...filtered.ExpressionAttributeNames },
    ExpressionAttributeValues: { ":pk": key.pk, ":lower": lower, ":upper": upper, ...filtered.ExpressionAttributeValues },
    Limit: filtered.FilterExpression ? Math.max(FILTERED_READ, limit + 1) : limit + 1,
  };
  const output = await getDocumentClient().send(new QueryCommand(input));
  const items = { Items: output.Items ?? [] };
  const data: (TaskItem | TaskLinkItem)[] = partition.kind === "record" ? db().entities.taskLink.parse(items).data : db().entities.task.parse(items).data;
  const lastKey = output.LastEvaluatedKey?.[key.skField] as string | undefined;
  return { tasks: data.map(stripLink), evaluatedTo: lastKey === undefined ? undefined : lastKey.slice(key.skPrefix.length) };
}

/** A task link copy as the task it copies. */
function stripLink(item: TaskItem | TaskLinkItem): TaskItem {
  if (!("linkKey" in item)) return item;
  const { recordType: _type, recordId: _id, linkKey: _key, ...task } = item as TaskLinkItem;
  return task as TaskItem;
}

/** Every task linked to a record, all statuses (a record has few tasks; pages followed). */
export async function queryRecordTasks(accountId: string, recordType: string, recordId: string): Promise<TaskItem[]> {
  const { data } = await db().entities.taskLink.query.primary({ accountId, recordType, recordId }).go({ pages: "all" });
  return data.map(stripLink);
}

export interface StatsWindow<T> {
  tally: T | undefined;
  /** Open tasks whose deadline is at most the window's end, in deadline order. */
  tasks: TaskItem[];
}

/**
 * The stats read, ONE Query: the tally and the open tasks due before `windowEnd`, from the
 * partition of a user's open tasks (gsi1) or the account's (gsi2), where the tally sorts first.
 */
export async function queryStatsWindow(
  partition: { kind: "assignee"; accountId: string; userId: string } | { kind: "account"; accountId: string },
  windowEnd: string,
): Promise<StatsWindow<TaskTallyItem | TaskAccountTallyItem>> {
  const p = prefix(partition.accountId);
  const [index, pkField, skField, pk] =
    partition.kind === "assignee"
      ? ["gsi1", "gsi1pk", "gsi1sk", `${p}#tasks#assignee_${partition.userId}#open`]
      : ["gsi2", "gsi2pk", "gsi2sk", `${p}#tasks#open`];
  const items: Record<string, unknown>[] = [];
  const pages = pagesOf((start) =>
    getDocumentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: index,
        KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :from AND :to",
        ExpressionAttributeNames: { "#pk": pkField, "#sk": skField },
        ExpressionAttributeValues: { ":pk": pk, ":from": "!", ":to": `${windowEnd}#~` },
        ExclusiveStartKey: start,
      }),
    ),
  );
  for await (const page of pages) items.push(...page);
  const tallyItems = { Items: items.filter((item) => item[ENTITY_ATTRIBUTE] === (partition.kind === "assignee" ? "tasktally" : "taskaccounttally")) };
  const taskItems = items.filter((item) => item[ENTITY_ATTRIBUTE] === "task");
  const tally: TaskTallyItem | TaskAccountTallyItem | undefined =
    partition.kind === "assignee" ? db().entities.taskTally.parse(tallyItems).data[0] : db().entities.taskAccountTally.parse(tallyItems).data[0];
  const { data: tasks } = db().entities.task.parse({ Items: taskItems });
  return { tally, tasks };
}

export async function readUserTally(accountId: string, userId: string): Promise<TaskTallyItem | undefined> {
  const { data } = await db().entities.taskTally.get({ accountId, userId }).go({ consistent: true });
  return data ?? undefined;
}

/** A task's activity, newest first: versions below `beforeVersion`, at most `limit + 1`. */
export async function queryActivity(accountId: string, taskId: string, beforeVersion: number | undefined, limit: number): Promise<TaskActivityItem[]> {
  const query = db().entities.taskActivity.query.primary({ accountId, taskId });
  const ranged = beforeVersion === undefined ? query : query.lt({ versionKey: versionKey(beforeVersion) });
  const { data } = await ranged.go({ order: "desc", limit: limit + 1, pages: 1, consistent: true });
  return data;
}

export const versionKey = (version: number): string => String(version).padStart(10, "0");

export async function readReminder(accountId: string, reminderId: string): Promise<TaskReminderItem | undefined> {
  const { data } = await db().entities.taskReminder.get({ accountId, reminderId }).go({ consistent: true });
  return data ?? undefined;
}

/** One inbox page, newest first, ONE Query: due entries (`inboxKey` <= `until`) before `before`. */
export async function queryInbox(accountId: string, userId: string, until: string, before: string | undefined, limit: number): Promise<TaskReminderItem[]> {
  const bound = before !== undefined && before < until ? before : undefined;
  const query = db().entities.taskReminder.query.inbox({ accountId, recipientUserId: userId });
  const ranged = bound !== undefined ? query.lt({ inboxKey: bound }) : query.lte({ inboxKey: until });
  const { data } = await ranged.go({ order: "desc", limit: limit + 1, pages: 1 });
  return data;
}

// --- Writes ----------------------------------------------------------------------------------

export interface UserTallyWrite {
  counts: Partial<Record<"open" | "completed" | "cancelled", number>>;
  setPending?: { id: string; at: string };
  removePending?: string;
}

export interface TaskWrite {
  /** The stored task this write replaces (undefined: a new task). */
  before: TaskItem | undefined;
  after: TaskItem;
  activity?: TaskActivityItem;
  reminder?: TaskReminderItem;
  /** A reminder the task no longer has (removed with `reminder_at: null`). */
  removeReminder?: string;
  users: ReadonlyMap<string, UserTallyWrite>;
  /**
   * Conditions on other records proven at commit (labelled with `addReferencingOp`): the
   * assignee still active, the linked record still there. A failure is 422 on the field.
   */
  guards?: (tx: TransactionBuilder) => void;
  account: Partial<Record<"open" | "completed" | "cancelled" | "recoveryOpen" | "recoveryCompleted" | "recoveryCancelled", number>>;
}

const TALLY = "tally:";
const ACCOUNT_TALLY = "tally:account";

const linkKeyOf = (task: TaskItem) => `${task.status}#${task.listKey}`;

function addTaskItems(tx: TransactionBuilder, write: TaskWrite): void {
  const { before, after } = write;
  const e = tx.entities;
  const { accountId } = after;
  if (before)
    tx.add(
      "task",
      e.task
        .put(after)
        .where(({ rev }, { eq }) => eq(rev, before.rev))
        .commit(),
    );
  else tx.add("task", e.task.create(after).commit());

  const oldLink = before?.record ? { type: before.record.type, id: before.record.id, linkKey: linkKeyOf(before) } : undefined;
  const newLink = after.record ? { type: after.record.type, id: after.record.id, linkKey: linkKeyOf(after) } : undefined;
  if (oldLink && !(newLink && newLink.type === oldLink.type && newLink.id === oldLink.id && newLink.linkKey === oldLink.linkKey)) {
    tx.add("task link removed", e.taskLink.delete({ accountId, recordType: oldLink.type, recordId: oldLink.id, linkKey: oldLink.linkKey }).commit());
  }
  if (newLink) {
    tx.add("task link", e.taskLink.put({ ...after, recordType: newLink.type, recordId: newLink.id, linkKey: newLink.linkKey }).commit());
  }
  if (write.activity) tx.add("activity", e.taskActivity.create(write.activity).commit());
  write.guards?.(tx);
  if (write.reminder) tx.add("reminder", e.taskReminder.put(write.reminder).commit());
  if (write.removeReminder) tx.add("reminder removed", e.taskReminder.delete({ accountId, reminderId: write.removeReminder }).commit());

  for (const [userId, change] of write.users) {
    const counts = Object.fromEntries(Object.entries(change.counts).filter(([, n]) => n !== 0));
    let op = e.taskTally.update({ accountId, userId }).add(counts);
    if (change.setPending || change.removePending) {
      op = op.data((attributes, operations) => {
        const pending = (attributes as unknown as { pending: Record<string, unknown> }).pending;
        if (change.setPending) operations.set(pending[change.setPending.id] as never, change.setPending.at as never);
        if (change.removePending) operations.remove(pending[change.removePending] as never);
      });
    }
    tx.add(`${TALLY}${userId}`, op.where(({ userId: id }, { exists }) => exists(id)).commit());
  }
  const accountCounts = Object.fromEntries(Object.entries(write.account).filter(([, n]) => n !== 0));
  if (Object.keys(accountCounts).length > 0) {
    tx.add(
      ACCOUNT_TALLY,
      e.taskAccountTally
        .update({ accountId })
        .add(accountCounts)
        .where(({ accountId: id }, { exists }) => exists(id))
        .commit(),
    );
  }
}

/** Creates the tallies a write needs that do not exist yet (each once per user, once per account). */
async function createTallies(accountId: string, userIds: readonly string[], account: boolean): Promise<void> {
  const creates: Promise<unknown>[] = userIds.map((userId) =>
    db().entities.taskTally.create({ accountId, userId, open: 0, completed: 0, cancelled: 0, pending: {} }).go({ response: "none" }),
  );
  if (account) creates.push(db().entities.taskAccountTally.create({ accountId }).go({ response: "none" }));
  const results = await Promise.allSettled(creates);
  for (const result of results) {
    if (result.status === "rejected" && !isConditionalFailure(result.reason)) throw result.reason;
  }
}

/** "ok", "task changed" (written by someone else since read), or the details of failed guards. */
export type TaskWriteResult = "ok" | "task changed" | ValidationDetail[];

/**
 * The write again after creating missing tallies races nobody (the tallies now exist), so it
 * runs again at once; when tallies are still missing on the third attempt the write gives up
 * with `ContentionError` (503 `resource_busy`; nothing was written).
 */
const TALLY_CREATION_POLICY: RetryPolicy = { attempts: 3, baseMs: 0, capMs: 0 };

/**
 * Writes a task change in ONE transaction: the task (conditioned on its `rev`, or on not
 * existing), its link copies, its activity event, its reminder, and the tallies it moves, with
 * the request's stored outcome. A tally that does not exist yet is created and the
 * transaction written again. Returns "task changed" when the task was written by someone else
 * since it was read (the caller reads again). Any other cancellation throws
 * `TransactionCanceledError`.
 *
 * It retries only to write again after creating tallies (no contended names: the caller's own
 * `retrying` loop is the one that reads again and queues on the task).
 */
export async function writeTask(write: TaskWrite, outcome: Outcome | undefined): Promise<TaskWriteResult> {
  return retrying<TaskWriteResult>(
    "task write",
    async () => {
      const cancellation = await writeTransaction((tx) => addTaskItems(tx, write), outcome);
      if (!cancellation) return "ok";
      const missing = cancellation.failedUnder(TALLY);
      if (missing.length > 0) {
        await createTallies(
          write.after.accountId,
          missing.map((r) => r.label.slice(TALLY.length)).filter((id) => id !== "account"),
          missing.some((r) => r.label === ACCOUNT_TALLY),
        );
      }
      if (cancellation.failed("task") || cancellation.failed("activity")) return "task changed";
      const details = referenceDetails(cancellation);
      if (details.length > 0) return details;
      if (missing.length === 0) throw new TransactionCanceledError(cancellation.reasons);
      return RETRY;
    },
    TALLY_CREATION_POLICY,
  );
}

/** Every task assigned to a user, all statuses (three partitions, pages followed): for refreshes. */
export async function queryAssigneeTasks(accountId: string, userId: string): Promise<TaskItem[]> {
  const statuses = ["open", "completed", "cancelled"] as const;
  const pages = await Promise.all(
    statuses.map((status) => db().entities.task.query.byAssignee({ accountId, assigneeUserId: userId, status }).go({ pages: "all" })),
  );
  return pages.flatMap((page) => page.data);
}

/** The condition that a user is an active user of the account (for a task's assignee). */
export function activeUserCheck(tx: TransactionBuilder, accountId: string, userId: string) {
  return tx.entities.user
    .check({ accountId, userId })
    .where(({ status }, { eq }) => eq(status, "active"))
    .commit();
}
