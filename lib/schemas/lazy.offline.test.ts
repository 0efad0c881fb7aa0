import { readdirSync } from "node:fs";
import * as z from "zod";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { scaled } from "../../test/support/timeouts.js";

/**
 * Schemas are built on first use (./lazy.ts): importing a function's handler, or the whole
 * route table, builds none; reading a route's `request` builds its request schemas only.
 *
 * What is built is seen through zod's global registry, where `.meta()` records a schema (nearly
 * every schema here has one, `Uuid` inside most). This file imports the project's modules only
 * after the registry is watched and the module registry reset (`vi.resetModules()`, which also
 * gives it a module graph of its own: vitest.config.ts), so they are evaluated here.
 */
const recorded: unknown[] = [];
const add = z.globalRegistry.add;

beforeAll(() => {
  vi.resetModules();
  z.globalRegistry.add = function (this: typeof z.globalRegistry, schema, ...meta) {
    recorded.push(meta[0]);
    return add.call(this, schema, ...meta);
  } as typeof add;
});
afterAll(() => {
  z.globalRegistry.add = add;
});

const ids = () => recorded.flatMap((meta) => (meta && typeof meta === "object" && "id" in meta ? [meta.id] : []));

describe("offline: schemas are built on first use", () => {
  it(
    "importing every function's handler and the route table builds no schema",
    async () => {
      for (const group of readdirSync("functions").sort()) await import(`../../functions/${group}/handler.ts`);
      await import("../routes/index.js");
      expect(recorded).toEqual([]);
    },
    scaled(60_000),
  );

  it("reading a route's request builds its request schemas, not its responses; the same instances every time", async () => {
    const { findRouteByKey } = await import("../routes/index.js");
    const route = findRouteByKey("POST /api/v3/invoices/{invoice_id}/payments")!;
    const { path, body } = route.request;
    expect(ids()).toContain("InvoicePaymentCreate");
    expect(ids()).not.toContain("InvoicePayment");
    expect(route.request.body).toBe(body);
    expect(route.request.path).toBe(path);
    const again = findRouteByKey("DELETE /api/v3/invoices/{invoice_id}/payments/{payment_id}")!;
    expect(again.request.path!.shape.invoice_id).toBe(path!.shape.invoice_id); // one `uuid` for every route
    expect(route.responses[201]).toBe(route.responses[201]);
    expect(ids()).toContain("InvoicePayment");
  });
});
