import { db } from "./service.js";
import type { RestoreGap } from "./sync.js";

/**
 * How far a restore moves each account's sync head: more changes than any account makes
 * between a restore point and the switch to the restored table, and small beside the 15
 * digits of a sequence key (a million restores fit).
 */
export const RESTORE_GAP = 1_000_000_000;

/**
 * Carries every account's change feed past what a point-in-time restore lost. The restored
 * table's sync heads are back at the restore point, but clients hold cursors, and receivers
 * webhook message ids, for changes numbered after it that the restored table no longer has:
 * reusing those numbers would make a cursor silently skip new changes and a receiver drop new
 * messages as duplicates. So each head jumps `RESTORE_GAP` ahead, and the skipped range is
 * noted on the head, where the feed refuses a cursor positioned in it (409
 * `sync_cursor_expired`: rebuild with `start=now`). Accounts come from the operator directory of
 * the restored table. Once per restored table: a head that already has this table's gap is left
 * as it is, so running it again changes nothing.
 */
export async function carrySyncFeedsPastRestore(tableName: string): Promise<{ accounts: number; carried: number }> {
  const e = db().entities;
  const { data: accounts } = await e.operatorDirectory.query.primary({ directory: "accounts" }).go({ pages: "all", consistent: true, table: tableName });
  let carried = 0;
  for (let i = 0; i < accounts.length; i += 10) {
    const results = await Promise.all(accounts.slice(i, i + 10).map(({ accountId }) => carryAccount(tableName, accountId)));
    carried += results.filter(Boolean).length;
  }
  return { accounts: accounts.length, carried };
}

async function carryAccount(tableName: string, accountId: string): Promise<boolean> {
  const e = db().entities;
  const { data: head } = await e.syncHead.get({ accountId }).go({ consistent: true, table: tableName });
  const gaps: RestoreGap[] = head?.restoreGaps ?? [];
  if (gaps.some((gap) => gap.table === tableName)) return false;
  const from = head?.seq ?? 0;
  const gap: RestoreGap = { table: tableName, after: from, upTo: from + RESTORE_GAP };
  // Nothing writes to the restored table before the stack is switched to it; the condition
  // still refuses to move a head that did move meanwhile.
  await e.syncHead
    .update({ accountId })
    .set({ seq: gap.upTo, lastAt: head?.lastAt ?? 0, restoreGaps: [...gaps, gap] })
    .where(({ seq }, { eq, notExists }) => (head ? eq(seq, from) : notExists(seq)))
    .go({ response: "none", table: tableName });
  return true;
}
