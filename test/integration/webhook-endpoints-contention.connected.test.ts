import { describe, expect, it } from "vitest";
import { useApiServer } from "../support/api.js";
import { newAccount } from "../support/fixtures.js";

/**
 * Webhook endpoints under contention (real parallel requests through the API): the 10-endpoint
 * limit holds when creates race, and parallel changes of one endpoint all land, one after
 * another, none lost and none answered 5xx.
 */
const api = useApiServer();
const url = "http://127.0.0.1:9/contention";

describe("webhook endpoints under contention", () => {
  it("30 simultaneous creates on one account: exactly 10 endpoints, the others 409 webhook_endpoint_limit_reached", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => client.post("/webhook-endpoints", { url, resources: ["item"], description: `race ${i}` })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 409)).toHaveLength(20);
    for (const refused of answers.filter((answer) => answer.status === 409)) expect(refused.body.error.code).toBe("webhook_endpoint_limit_reached");
    const listed = await client.get("/webhook-endpoints", { limit: 100 });
    expect(listed.body.pagination.total_records).toBe(10);
    // Deleting one frees one place, and only one.
    expect((await client.request("DELETE", `/webhook-endpoints/${listed.body.data[0].id}`)).status).toBe(200);
    const again = await Promise.all(Array.from({ length: 3 }, () => client.post("/webhook-endpoints", { url, resources: ["item"] })));
    expect(again.map((answer) => answer.status).sort()).toEqual([201, 409, 409]);
  });

  it("50 simultaneous changes of one endpoint: every one 200, the last one written is what stays", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const created = await client.post("/webhook-endpoints", { url, resources: ["item"] });
    expect(created.status, created.text).toBe(201);
    const path = `/webhook-endpoints/${created.body.id}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 10 === 9 ? client.post(`${path}/rotate-secret`) : client.patch(path, { description: `change ${i}` }))),
    );
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200)).toEqual([]);
    const stored = await client.get(path);
    const latest = answers
      .map((answer) => answer.body)
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at))
      .at(-1);
    expect(stored.body.updated_at).toBe(latest.updated_at);
    expect(new Set(answers.map((answer) => answer.body.updated_at)).size).toBe(50); // each write moved updated_at
    expect(stored.body.description).toBe(
      answers
        .filter((answer) => answer.body.description !== undefined)
        .map((answer) => answer.body)
        .sort((a, b) => a.updated_at.localeCompare(b.updated_at))
        .at(-1).description,
    );
  });
});
