import { AsyncLocalStorage } from "node:async_hooks";

/** DynamoDB usage of one request, reported in its log line and checked against budgets. */
export interface DbUsage {
  calls: number;
  readCapacity: number;
  writeCapacity: number;
  /** Command names in call order, e.g. `GetItem`, `TransactWriteItems`. */
  commands: string[];
  /** Epoch ms after which a retrying write gives up rather than outlive the request. */
  deadline?: number;
}

const storage = new AsyncLocalStorage<DbUsage>();

export function newDbUsage(deadline?: number): DbUsage {
  return { calls: 0, readCapacity: 0, writeCapacity: 0, commands: [], deadline };
}

/** Runs `fn` with its own usage counter; every DynamoDB call inside it is counted there. */
export function withDbUsage<T>(usage: DbUsage, fn: () => Promise<T>): Promise<T> {
  return storage.run(usage, fn);
}

export function currentDbUsage(): DbUsage | undefined {
  return storage.getStore();
}
