import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler } from "../../functions/stream-processor/handler.js";
import { tableName } from "../../lib/db/table.js";
import { readTask } from "../../lib/db/tasks.js";
import { deleteUser } from "../../lib/domain/admin/service.js";
import { startStreamPoller, type StreamPoller } from "../../scripts/local/stream-poller.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import { idempotencyKey, newAccount, updateUser, type TestAccount } from "../support/fixtures.js";
import { allPages, newTask, patchTask, taskUser, type TaskUser } from "../support/tasks.js";

/**
 * The snapshots a task keeps so that a list page is one Query (assignee name and active state,
 * linked record name and number) follow the user and the record through the stream processor,
 * driven here by the local poller as Lambda's event source mapping drives it. Recovery: tasks
 * whose assignee is no longer active.
 */
const api = useApiServer();
let poller: StreamPoller;
let account: TestAccount;
let owner: ApiClient;

beforeAll(async () => {
  poller = await startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: tableName(), handler, intervalMs: 50 });
  account = await newAccount();
  owner = api().withKey(account.ownerKey);
});
afterAll(async () => {
  await poller.stop();
});

/** Drains the stream until `check` holds (the processor's writes produce stream records too). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 30; attempt++) {
    await poller.drain();
    if (await check()) return;
  }
  throw new Error("the stream processor did not catch up");
}

describe("linked record snapshots", () => {
  it("a renamed customer shows its new name in the task and in lists; a deleted one becomes unavailable", async () => {
    const customer = (await owner.post("/customers", { name: "Old Name Ltd" }, { idempotencyKey: idempotencyKey() })).body;
    const task = await newTask(owner, { title: "follows the customer", record: { type: "customer", id: customer.id } });
    expect(task.record).toMatchObject({ name: "Old Name Ltd", number: customer.customer_number });
    await owner.patch(`/customers/${customer.id}`, { name: "New Name Ltd" });
    await eventually(async () => (await owner.get(`/tasks/${task.id}`)).body.record?.name === "New Name Ltd");
    const stored = (await owner.get(`/tasks/${task.id}`)).body;
    expect(stored.version).toBe(1); // the task itself did not change
    const listed = await allPages(owner, "/tasks", { record_type: "customer", record_id: customer.id });
    expect(listed.map((t) => t.record.name)).toEqual(["New Name Ltd"]);
    expect((await owner.get(`/tasks/${task.id}/activity`)).body.data).toHaveLength(1);

    expect((await owner.request("DELETE", `/customers/${customer.id}`)).status).toBe(200);
    await eventually(async () => (await owner.get(`/tasks/${task.id}`)).body.record?.available === false);
    const gone = await owner.get(`/tasks/${task.id}`);
    expect(gone.body.record).toEqual({ available: false });
    expect(gone.text).not.toContain("New Name Ltd");
    expect(gone.text).not.toContain(customer.id);
    expect((await allPages(owner, "/tasks")).find((t) => t.id === task.id).record).toEqual({ available: false });
  });

  it("a prospect converted into a customer (an estimate's conversion) keeps its tasks: they link the customer from then on", async () => {
    const prospect = (await owner.post("/prospects", { name: "Soon Customer Ltd" }, { idempotencyKey: idempotencyKey() })).body;
    const task = await newTask(owner, { title: "follow the prospect", record: { type: "prospect", id: prospect.id } });
    expect(task.record).toMatchObject({ type: "prospect", id: prospect.id, name: "Soon Customer Ltd" });
    const estimate = (await owner.post("/estimates", { customer_id: prospect.id, lines: [{ name: "Study", unit_price: "5" }] })).body;
    expect((await owner.post(`/estimates/${estimate.id}/convert-to-sales-order`, {})).status).toBe(201);
    await eventually(async () => (await owner.get(`/tasks/${task.id}`)).body.record?.type === "customer");
    const moved = (await owner.get(`/tasks/${task.id}`)).body;
    expect(moved).toMatchObject({ version: 1, record: { type: "customer", id: prospect.id, name: "Soon Customer Ltd", number: prospect.customer_number } });
    expect((await allPages(owner, "/tasks", { record_type: "customer", record_id: prospect.id })).map((t) => t.id)).toEqual([task.id]);
  });

  it("a renamed item follows; stock changes alone rewrite nothing", async () => {
    const item = (await owner.post("/items", { name: "Widget" })).body;
    const task = await newTask(owner, { title: "about the widget", record: { type: "item", id: item.id } });
    await owner.patch(`/items/${item.id}`, { name: "Widget Pro" });
    await eventually(async () => (await owner.get(`/tasks/${task.id}`)).body.record?.name === "Widget Pro");
    expect((await owner.get(`/tasks/${task.id}`)).body).toMatchObject({
      version: 1,
      record: { type: "item", id: item.id, name: "Widget Pro", number: item.item_number },
    });
    const rev = (await readTask(account.accountId, task.id))!.rev;
    const location = (await owner.post("/locations", { name: "Snapshot store", short_name: "SS" }, { idempotencyKey: idempotencyKey() })).body.id;
    expect((await owner.post(`/items/${item.id}/adjustments`, { location_id: location, quantity: 5 })).status).toBe(201);
    for (let i = 0; i < 3; i++) await poller.drain();
    expect((await readTask(account.accountId, task.id))!.rev).toBe(rev);
  });
});

describe("assignee snapshots and recovery", () => {
  let manager: TaskUser;
  let leaver: TaskUser;

  beforeAll(async () => {
    manager = await taskUser(account, { permissions: ["tasks.manage_all", "tasks.assign"] });
    leaver = await taskUser(account, { name: "Leaving Soon" });
  });

  it("an inactive assignee shows active: false; recovery lists and counts their tasks; reactivation reverses it", async () => {
    const m = api().withKey(manager.key);
    const open = await newTask(m, { title: "left behind", assignee_user_id: leaver.userId, due_date: "2020-01-01", time_zone: "UTC" });
    const done = await newTask(m, { title: "finished before leaving", assignee_user_id: leaver.userId });
    await patchTask(m, done.id, { version: 1, status: "completed" });
    const before = (await m.get("/tasks/stats", { scope: "recovery" })).body;
    expect(before).toMatchObject({ open: 0, completed: 0, overdue: 0 });
    expect(await allPages(m, "/tasks", { scope: "recovery" })).toEqual([]);

    await updateUser(leaver.userId, { status: "inactive" });
    await eventually(async () => (await m.get(`/tasks/${open.id}`)).body.assignee.active === false);
    expect((await m.get(`/tasks/${open.id}`)).body.assignee).toEqual({ id: leaver.userId, name: "Leaving Soon", photo_url: null, active: false });
    expect((await allPages(m, "/tasks", { scope: "recovery" })).map((t) => t.id)).toEqual([open.id]);
    expect((await allPages(m, "/tasks", { scope: "recovery", status: "completed" })).map((t) => t.id)).toEqual([done.id]);
    expect((await m.get("/tasks/stats", { scope: "recovery" })).body).toMatchObject({ open: 1, completed: 1, overdue: 1 });
    expect(await allPages(m, "/tasks", { scope: "recovery", assignee: manager.userId })).toEqual([]);

    // Recovering: reassign to an active user; the task leaves recovery at once.
    const reassigned = await patchTask(m, open.id, { version: 1, assignee_user_id: manager.userId });
    expect(reassigned.body.assignee).toMatchObject({ id: manager.userId, active: true });
    expect(await allPages(m, "/tasks", { scope: "recovery" })).toEqual([]);
    expect((await m.get("/tasks/stats", { scope: "recovery" })).body).toMatchObject({ open: 0, completed: 1 });
    expectError(await patchTask(m, open.id, { version: 2, assignee_user_id: leaver.userId }), 422, "validation_failed");

    await updateUser(leaver.userId, { status: "active" });
    await eventually(async () => (await m.get(`/tasks/${done.id}`)).body.assignee.active === true);
    expect((await m.get("/tasks/stats", { scope: "recovery" })).body).toMatchObject({ open: 0, completed: 0 });
  });

  it("an assignee moved to another account shows active: false in the old one; their tasks there go to recovery", async () => {
    const m = api().withKey(manager.key);
    const mover = await taskUser(account, { name: "Moving On" });
    const task = await newTask(m, { title: "stays here", assignee_user_id: mover.userId });
    const elsewhere = await newAccount();
    await updateUser(mover.userId, { accountId: elsewhere.accountId });
    await eventually(async () => (await m.get(`/tasks/${task.id}`)).body.assignee.active === false);
    expect((await m.get(`/tasks/${task.id}`)).body.assignee).toEqual({ id: mover.userId, name: "Moving On", photo_url: null, active: false });
    expect((await allPages(m, "/tasks", { scope: "recovery" })).map((t) => t.id)).toContain(task.id);
  });

  it("a deleted assignee's tasks go to recovery", async () => {
    const m = api().withKey(manager.key);
    const temp = await taskUser(account, { name: "Temp Worker" });
    const task = await newTask(m, { title: "orphaned", assignee_user_id: temp.userId });
    await deleteUser(temp.userId);
    await eventually(async () => (await m.get(`/tasks/${task.id}`)).body.assignee.active === false);
    expect((await allPages(m, "/tasks", { scope: "recovery" })).map((t) => t.id)).toContain(task.id);
    expect((await m.get(`/tasks/${task.id}`)).body.assignee.name).toBe("Temp Worker");
  });
});
