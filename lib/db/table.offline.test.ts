import { afterEach, describe, expect, it } from "vitest";
import { LOCAL_TABLE_NAME, tableName } from "./table.js";

describe("offline: tableName", () => {
  const saved = { table: process.env.TABLE_NAME, fn: process.env.AWS_LAMBDA_FUNCTION_NAME };
  afterEach(() => {
    for (const [key, value] of [
      ["TABLE_NAME", saved.table],
      ["AWS_LAMBDA_FUNCTION_NAME", saved.fn],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it("is TABLE_NAME wherever it is set", () => {
    process.env.TABLE_NAME = "prod-table";
    process.env.AWS_LAMBDA_FUNCTION_NAME = "inventory-invoices";
    expect(tableName()).toBe("prod-table");
  });

  it("falls back to the local table only outside Lambda", () => {
    delete process.env.TABLE_NAME;
    delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    expect(tableName()).toBe(LOCAL_TABLE_NAME);
  });

  it("refuses, naming the function, when a deployed function has no TABLE_NAME", () => {
    delete process.env.TABLE_NAME;
    process.env.AWS_LAMBDA_FUNCTION_NAME = "inventory-invoices";
    expect(() => tableName()).toThrow("TABLE_NAME is not set on function inventory-invoices");
  });
});
