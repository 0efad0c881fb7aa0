import { nowIso } from "../../../core/clock.js";
import { notePassedExpiry, passedEstimateExpiries } from "../../../db/estimate-expiries.js";

/** Updates in flight at once while a sweep takes estimates out of the expiry index. */
const SWEEP_CONCURRENCY = 25;

/**
 * Makes the expiries that time brought into changes of the feed (run on the stream processor's
 * schedule, every minute deployed): every open estimate whose expiry moment passed by `now`
 * leaves the expiry index (`lib/db/estimate-expiries.ts`), a change of the estimate that the
 * stream marks (`upsert`), so a sync client or a webhook receiver learns that it reads 8 Expired
 * now. Idempotent; returns how many estimates it marked. `accountId` limits it to one account's
 * estimates (a test that moves its clock forward touches no other account's).
 */
export async function markPassedEstimateExpiries(now: string = nowIso(), accountId?: string): Promise<number> {
  const passed = (await passedEstimateExpiries(now)).filter((entry) => accountId === undefined || entry.accountId === accountId);
  let marked = 0;
  for (let i = 0; i < passed.length; i += SWEEP_CONCURRENCY) {
    const noted = await Promise.all(passed.slice(i, i + SWEEP_CONCURRENCY).map(notePassedExpiry));
    marked += noted.filter(Boolean).length;
  }
  return marked;
}
