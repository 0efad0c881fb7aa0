import { randomUUID } from "node:crypto";
import type { Principal } from "../../lib/auth/permissions.js";

/**
 * List cost by account size (issue 19, "lists that do not read the account"): builds invoice
 * accounts of each size (headers written in bulk through the db layer, cloned from one invoice
 * created through the domain), then measures `GET /invoices` with each filter the spec lists,
 * and the last page, through the domain function the route calls. The figures are the DynamoDB
 * calls and read units of the request (the same counter its log line reports), auth excluded.
 *
 * Each account holds, besides its bulk: RARE (10) invoices of one customer, with status
 * Cancelled, issue date 2020-01-15 and at a second location; every other invoice is at the first
 * location, alternately Sent and Paid. So every bounded filter matches 10 invoices whatever the
 * size, and `status_id=9` matches half the account.
 *
 * `npm run bench` calls `listCost()`; `npx tsx scripts/bench/list-cost.ts` runs it alone.
 */
export const RARE = 10;

export interface ListCostRow {
  list: string;
  /** A filter that matches a bounded number of invoices (checked against the budget). */
  bounded: boolean;
  calls: number[];
  readCapacity: number[];
}

export interface ListCostResult {
  sizes: number[];
  rows: ListCostRow[];
}

/** The budget `--check` applies: RCU at the largest size at most this multiple of the smallest. */
export const LIST_COST_RATIO = 2;

/** Rows over the budget (bounded filters and deep pages only). */
export function listCostViolations(result: ListCostResult): string[] {
  return result.rows
    .filter((row) => row.bounded)
    .filter((row) => row.readCapacity.at(-1)! > LIST_COST_RATIO * Math.max(1, row.readCapacity[0]!))
    .map((row) => `${row.list}: ${row.readCapacity.at(-1)} RCU at ${result.sizes.at(-1)} vs ${row.readCapacity[0]} at ${result.sizes[0]}`);
}

interface Fixture {
  owner: Principal;
  restricted: Principal;
  size: number;
  rareCustomerId: string;
  rareNumber: number;
}

const ownerOf = (accountId: string, userId: string): Principal => ({
  accountId,
  userId,
  role: "owner",
  permissions: new Set(),
  assignedLocationId: null,
  timeZone: null,
  keyId: "bench",
  keyHash: "bench",
  scopes: null,
});

/** An account with `size` invoices (see the module comment). */
export async function buildInvoiceAccount(size: number): Promise<Fixture> {
  const { createAccount, createLocationAsOperator } = await import("../../lib/domain/admin/service.js");
  const { createParty } = await import("../../lib/domain/records/parties.js");
  const { createInvoice } = await import("../../lib/domain/documents/invoices/service.js");
  const { readDocumentHeader } = await import("../../lib/db/documents.js");
  const { documentListing } = await import("../../lib/db/document-lists.js");
  const { numberKeyOf } = await import("../../lib/core/document-scope.js");
  const { db } = await import("../../lib/db/service.js");
  const account = await createAccount({ name: `List cost ${size}` });
  const owner = ownerOf(account.account_id, account.user_id);
  const { location_id: common } = await createLocationAsOperator({ accountId: owner.accountId, name: "Main", shortName: "MAIN" });
  const { location_id: rare } = await createLocationAsOperator({ accountId: owner.accountId, name: "Annex", shortName: "ANX" });
  const commonCustomer = await createParty(owner, "customer", { name: "Common Customer" } as never, undefined);
  const rareCustomer = await createParty(owner, "customer", { name: "Rare Customer Zq" } as never, undefined);
  const first = await createInvoice(owner, { customer_id: commonCustomer.id, lines: [{ name: "Service", unit_price: "10", quantity: 1 }] } as never, undefined);
  const base = (await readDocumentHeader(owner.accountId, (first.body as { id: string }).id))!;
  const every = Math.floor(size / RARE);
  const isRare = (number: number) => number % every === 0 && number / every <= RARE;
  const headers = Array.from({ length: size }, (_, i) => {
    const number = i + 1;
    const rareOne = isRare(number);
    const status = rareOne ? { status: "cancelled", statusId: 12 } : number % 2 === 0 ? { status: "sent", statusId: 9 } : { status: "paid", statusId: 11 };
    const location = rareOne ? rare : common;
    const customer = rareOne ? rareCustomer : commonCustomer;
    const header = {
      ...base,
      documentId: number === 1 ? base.documentId : randomUUID(),
      number,
      numberKey: numberKeyOf(number),
      ...status,
      partyId: customer.id,
      partyName: customer.name,
      searchText: String(customer.name).toLowerCase(),
      issueDate: rareOne ? "2020-01-15" : "2024-06-01",
      locationId: location,
      locationScope: location,
      itemIds: undefined,
    };
    return { ...header, ...documentListing(header) };
  });
  for (let i = 0; i < headers.length; i += 500)
    await db()
      .entities.document.put(headers.slice(i, i + 500) as never)
      .go();
  await db().entities.sequence.update({ accountId: owner.accountId, name: "invoice" }).set({ value: size, count: size }).go();
  await db()
    .entities.ownerCounters.update({ accountId: owner.accountId, userId: owner.userId })
    .set({ invoiceCount: size } as never)
    .go();
  const restricted: Principal = {
    ...owner,
    userId: randomUUID(),
    role: "staff",
    permissions: new Set(["records.view_all", "invoices.list"]),
    assignedLocationId: rare,
  };
  return { owner, restricted, size, rareCustomerId: rareCustomer.id as string, rareNumber: every * 3 };
}

/** The lists measured: label, bounded, caller, query, page. */
function listsOf(fixture: Fixture): [string, boolean, Principal, Record<string, string>, number][] {
  const lastPage = Math.ceil(fixture.size / 20);
  return [
    ["page 1", true, fixture.owner, {}, 1],
    ["last page (page=size/20)", true, fixture.owner, {}, lastPage],
    ["status_id (10 match)", true, fixture.owner, { status_id: "12" }, 1],
    ["customer_id (10 match)", true, fixture.owner, { customer_id: fixture.rareCustomerId }, 1],
    ["issue date range (10 match)", true, fixture.owner, { issue_date_from: "2020-01-01", issue_date_to: "2020-01-31" }, 1],
    // A numeric q also searches the text (spec): it reads the kind's names entries, like q name.
    ["q number (1 match)", false, fixture.owner, { q: String(fixture.rareNumber) }, 1],
    ["restricted location user (10 match)", true, fixture.restricted, {}, 1],
    ["q name (10 match)", false, fixture.owner, { q: "zq" }, 1],
    ["status_id (half match), page 1", false, fixture.owner, { status_id: "9" }, 1],
    ["status_id (half match), last page", false, fixture.owner, { status_id: "9" }, Math.ceil(fixture.size / 40)],
  ];
}

/** Measures every list of `lists` on accounts of each size; prints a table through `print`. */
export async function listCost(options: { sizes?: number[]; print?: (text: string) => void } = {}): Promise<ListCostResult> {
  const sizes = options.sizes ?? [100, 5000];
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  const { listInvoices } = await import("../../lib/domain/documents/invoices/service.js");
  const { newDbUsage, withDbUsage } = await import("../../lib/db/metrics.js");
  const rows = new Map<string, ListCostRow>();
  for (const size of sizes) {
    const fixture = await buildInvoiceAccount(size);
    for (const [list, bounded, principal, query, page] of listsOf(fixture)) {
      const usage = newDbUsage();
      const result = await withDbUsage(usage, () => listInvoices(principal, "/api/v3/invoices", { page, limit: 20 }, query as never));
      if (bounded && list !== "page 1" && !list.startsWith("last") && result.data.length === 0) throw new Error(`${list}: no match at ${size}`);
      const row = rows.get(list) ?? { list, bounded, calls: [], readCapacity: [] };
      row.calls.push(usage.calls);
      row.readCapacity.push(usage.readCapacity);
      rows.set(list, row);
    }
  }
  const result = { sizes, rows: [...rows.values()] };
  print(
    `\nList cost: GET /invoices by account size (domain call, auth excluded; limit 20; budget RCU@${sizes.at(-1)} <= ${LIST_COST_RATIO} x RCU@${sizes[0]} for bounded lists)\n`,
  );
  print(`| list | ${sizes.map((s) => `RCU@${s}`).join(" | ")} | ${sizes.map((s) => `calls@${s}`).join(" | ")} | ratio |\n`);
  print(`|---|${sizes.map(() => "---|").join("")}${sizes.map(() => "---|").join("")}---|\n`);
  for (const row of result.rows) {
    const ratio = row.readCapacity.at(-1)! / Math.max(0.5, row.readCapacity[0]!);
    print(`| ${row.list}${row.bounded ? "" : " (unbounded)"} | ${row.readCapacity.join(" | ")} | ${row.calls.join(" | ")} | ${ratio.toFixed(1)} |\n`);
  }
  return result;
}

// Run alone: starts its own DynamoDB Local in memory.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { applyLocalEnvironment } = await import("../local/env.js");
  const { freePort, startDynamoLocal } = await import("../local/dynamodb.js");
  process.env.DATA_DIR = "memory";
  const dynamo = await startDynamoLocal({ port: await freePort(), dataDir: "memory" });
  applyLocalEnvironment(dynamo.endpoint);
  try {
    const { ensureTable } = await import("../../lib/db/create-table.js");
    const { createDynamoClient } = await import("../../lib/db/client.js");
    const { tableName } = await import("../../lib/db/table.js");
    await ensureTable(createDynamoClient(), tableName());
    const sizes = process.env.LIST_COST_SIZES?.split(",").map(Number);
    const result = await listCost({ sizes });
    const violations = listCostViolations(result);
    if (process.argv.includes("--check") && violations.length > 0) {
      process.stdout.write(`over budget:\n${violations.join("\n")}\n`);
      process.exitCode = 1;
    }
  } finally {
    await dynamo.stop();
  }
}
