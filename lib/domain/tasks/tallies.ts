import { isPendingReminder, type StoredReminderStatus, type TaskStatus } from "./rules.js";

/**
 * How a task write moves the tallies (pure): the counts of the old and new assignee's tally
 * and of the account's tally, and the pending-reminder entries (one per reminder that its
 * recipient has not read, dismissed or completed). Merged per item, since one transaction
 * must never touch an item twice.
 */
export interface TallyState {
  status: TaskStatus;
  assigneeUserId: string;
  assigneeActive: boolean;
  reminder?: { id: string; status: StoredReminderStatus; scheduledAt: string; recipientUserId: string };
}

export type CountName = "open" | "completed" | "cancelled";
export type AccountCountName = CountName | "recoveryOpen" | "recoveryCompleted" | "recoveryCancelled";

export interface UserTallyChange {
  counts: Partial<Record<CountName, number>>;
  /** Sets the pending entry of a reminder (its scheduled instant). */
  setPending?: { id: string; at: string };
  /** Removes the pending entry of a reminder. */
  removePending?: string;
}

export interface TallyChanges {
  users: Map<string, UserTallyChange>;
  account: Partial<Record<AccountCountName, number>>;
}

const RECOVERY: Record<TaskStatus, AccountCountName> = { open: "recoveryOpen", completed: "recoveryCompleted", cancelled: "recoveryCancelled" };

function bump<K extends string>(counts: Partial<Record<K, number>>, name: K, by: number): void {
  const next = (counts[name] ?? 0) + by;
  if (next === 0) delete counts[name];
  else counts[name] = next;
}

const pendingOf = (state: TallyState | undefined) => (state?.reminder && isPendingReminder(state.reminder.status) ? state.reminder : undefined);

export function tallyChanges(before: TallyState | undefined, after: TallyState | undefined): TallyChanges {
  const users = new Map<string, UserTallyChange>();
  const userChange = (userId: string) => {
    const change = users.get(userId) ?? { counts: {} };
    users.set(userId, change);
    return change;
  };
  const account: Partial<Record<AccountCountName, number>> = {};
  for (const [state, by] of [
    [before, -1],
    [after, 1],
  ] as const) {
    if (!state) continue;
    bump(userChange(state.assigneeUserId).counts, state.status, by);
    bump(account, state.status, by);
    if (!state.assigneeActive) bump(account, RECOVERY[state.status], by);
  }
  const was = pendingOf(before);
  const is = pendingOf(after);
  if (was && is && was.recipientUserId === is.recipientUserId) {
    if (was.scheduledAt !== is.scheduledAt || was.id !== is.id) userChange(is.recipientUserId).setPending = { id: is.id, at: is.scheduledAt };
  } else {
    if (was) userChange(was.recipientUserId).removePending = was.id;
    if (is) userChange(is.recipientUserId).setPending = { id: is.id, at: is.scheduledAt };
  }
  for (const [userId, change] of users) {
    if (Object.keys(change.counts).length === 0 && !change.setPending && !change.removePending) users.delete(userId);
  }
  return { users, account };
}

/** Unread reminders of a tally's pending entries: those already due. */
export function unreadCount(pending: Record<string, unknown> | undefined, now: Date): number {
  let count = 0;
  for (const at of Object.values(pending ?? {})) if (typeof at === "string" && Date.parse(at) <= now.getTime()) count++;
  return count;
}
