import type { StockChange } from "../../lib/domain/inventory/stock-changes.js";
import { randomUUID } from "node:crypto";
import { holdStock } from "../../lib/domain/inventory/stock-holds.js";

/**
 * A writer to kill (test/integration/atomic-writes.connected.test.ts): takes a stock hold of
 * `HOLD_CHANGES` (JSON) in account `HOLD_ACCOUNT` and never binds it, as a request that dies
 * before its commit point, with a lease of `HOLD_LEASE_MS` ms. Prints `journal <id>` before
 * writing its first chunk.
 */
const journalId = randomUUID();
process.stdout.write(`journal ${journalId}\n`);
await holdStock({
  accountId: process.env.HOLD_ACCOUNT!,
  source: { sourceType: "stock_transfer", reason: "test: writer killed" },
  changes: JSON.parse(process.env.HOLD_CHANGES!) as StockChange[],
  journalId,
  leaseMs: Number(process.env.HOLD_LEASE_MS),
});
process.stdout.write("held\n");
