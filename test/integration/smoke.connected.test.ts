import { describe, expect, it } from "vitest";
import { useApiServer } from "../support/api.js";
import { idempotencyKey, newAccount } from "../support/fixtures.js";

const api = useApiServer();

describe("smoke", () => {
  it("creates and lists a location", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const created = await client.post("/locations", { name: "Alpha", short_name: "A" }, { idempotencyKey: idempotencyKey() });
    expect(created.status).toBe(201);
    const list = await client.get("/locations");
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([created.body]);
  });
});
