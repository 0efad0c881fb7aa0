import { AsyncLocalStorage } from "node:async_hooks";
import { clockTimeOf } from "../core/clock.js";

/** DynamoDB usage of one request, reported in its log line and checked against budgets. */
export interface DbUsage {
  calls: number;
  readCapacity: number;
  writeCapacity: number;
  /** Command names in call order, e.g. `GetItem`, `TransactWriteItems`. */
  commands: string[];
  /** Epoch ms after which a retrying write gives up rather than outlive the request. */
  deadline?: number;
  /** Epoch ms the request was received (API Gateway's `requestContext.timeEpoch`). */
  receivedAt?: number;
}

const storage = new AsyncLocalStorage<DbUsage>();

export function newDbUsage(deadline?: number, receivedAt?: number): DbUsage {
  return { calls: 0, readCapacity: 0, writeCapacity: 0, commands: [], deadline, receivedAt };
}

/** Runs `fn` with its own usage counter; every DynamoDB call inside it is counted there. */
export function withDbUsage<T>(usage: DbUsage, fn: () => Promise<T>): Promise<T> {
  return storage.run(usage, fn);
}

export function currentDbUsage(): DbUsage | undefined {
  return storage.getStore();
}

/**
 * When the current request was received (epoch ms, on the clock records' `updatedAt` is read
 * from): what a write compares an `updatedAt` with to tell a change made while the request was
 * in flight from one made before it came. Now, outside a request.
 */
export function requestReceivedAt(): number {
  return clockTimeOf(storage.getStore()?.receivedAt ?? Date.now());
}
