import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createAccount, createKit } from "../../lib/domain/admin/service.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, updateUser, type TestAccount } from "../support/fixtures.js";
import { createTask, expectNoStore, newTask, patchTask, TASK_KEYS, taskUser, type TaskUser } from "../support/tasks.js";

/**
 * Tasks (spec part 2, sections 2.6, 3.6 and 4.6): create, retrieve, update with optimistic
 * versions, time zones, permissions and visibility, linked records, Cache-Control. Lists,
 * stats and the rest: tasks-lists.connected.test.ts; reminders: task-reminders...; snapshots
 * kept by the stream processor: task-snapshots...
 */
const api = useApiServer();

let account: TestAccount;
let owner: ApiClient;

beforeAll(async () => {
  account = await newAccount();
  owner = api().withKey(account.ownerKey);
});

describe("create and retrieve", () => {
  it("creates an open task with the spec's fields in order, assigned to the caller, no-store", async () => {
    const response = await createTask(owner, {
      title: "Call Acme",
      description: "About the order",
      due_date: "2030-05-04",
      due_time: "09:30",
      time_zone: "Europe/London",
    });
    expect(response.status, response.text).toBe(201);
    expectNoStore(response);
    const task = response.body;
    expect(Object.keys(task)).toEqual(TASK_KEYS);
    expect(task).toMatchObject({
      object: "task",
      title: "Call Acme",
      description: "About the order",
      status: "open",
      version: 1,
      time_zone: "Europe/London",
      due_date: "2030-05-04",
      due_time: "09:30",
      due_at: "2030-05-04T08:30:00.000Z",
      overdue_at: "2030-05-04T08:30:00.000Z",
      completed_at: null,
      reminder: null,
      record: null,
      available_actions: ["edit", "complete", "cancel"],
    });
    expect(Object.keys(task.assignee)).toEqual(["id", "name", "photo_url", "active"]);
    expect(task.assignee).toEqual({ id: account.ownerUserId, name: "Owner", photo_url: null, active: true });
    expect(task.created).toBe(task.modified);
    const got = await owner.get(`/tasks/${task.id}`);
    expect(got.status).toBe(200);
    expectNoStore(got);
    expect(got.body).toEqual(task);
  });

  it("a date-only deadline keeps its date, has no due_at, and is overdue from the next local midnight", async () => {
    const task = await newTask(owner, { title: "Date only", due_date: "2030-07-01", time_zone: "America/New_York" });
    expect(task).toMatchObject({ due_date: "2030-07-01", due_time: null, due_at: null, overdue_at: "2030-07-02T04:00:00.000Z" });
    const undated = await newTask(owner, { title: "Undated" });
    expect(undated).toMatchObject({ due_date: null, due_time: null, due_at: null, overdue_at: null });
  });

  it("requires an Idempotency-Key and replays an identical retry (one task stored)", async () => {
    const missing = await owner.post("/tasks", { title: "No key" });
    expectError(missing, 400, "idempotency_key_required", "Idempotency-Key");
    expectNoStore(missing);
    const key = idempotencyKey();
    const first = await owner.post("/tasks", { title: `Replay ${key}` }, { idempotencyKey: key });
    const again = await owner.post("/tasks", { title: `Replay ${key}` }, { idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expectNoStore(again);
    expect(again.body).toEqual(first.body);
    const reused = await owner.post("/tasks", { title: "Other" }, { idempotencyKey: key });
    expectError(reused, 409, "idempotency_key_reused");
    const found = await owner.get("/tasks", { q: key, limit: 100 });
    expect(found.body.data.map((t: { id: string }) => t.id)).toEqual([first.body.id]);
  });

  it("validates fields and stores nothing on failure", async () => {
    const before = (await owner.get("/tasks/stats")).body.open;
    expectValidation(await createTask(owner, {}), "title", "required");
    expectValidation(await createTask(owner, { title: "  " }), "title", "blank");
    expectValidation(await createTask(owner, { title: "x".repeat(256) }), "title", "too_long");
    expectValidation(await createTask(owner, { title: "t", status: "completed" }), "status");
    expectValidation(await createTask(owner, { title: "t", colour: "red" }), "colour", "unknown_field");
    expectValidation(await createTask(owner, { title: "t", due_time: "09:00" }), "due_time", "requires_due_date");
    expectValidation(await createTask(owner, { title: "t", due_date: "2030-02-30" }), "due_date");
    expectValidation(await createTask(owner, { title: "t", due_date: "2030-02-03", due_time: "24:00" }), "due_time");
    expectValidation(await createTask(owner, { title: "t", due_date: "2030-02-03", due_time: "9:00" }), "due_time");
    expectValidation(await createTask(owner, { title: "t", time_zone: "Mars/Olympus" }), "time_zone");
    expectValidation(await createTask(owner, { title: "t", time_zone: "+02:00" }), "time_zone");
    expectValidation(await createTask(owner, { title: "t", time_zone: "UTC", time_zone_mode: "mine" }), "time_zone_mode");
    expectValidation(await createTask(owner, { title: "t", time_zone_mode: "theirs" }), "time_zone_mode");
    expectValidation(await createTask(owner, { title: "t", reminder_at: "2099-01-01T09:00:00" }), "reminder_at", "invalid_format");
    expectValidation(await createTask(owner, { title: "t", reminder_at: "tomorrow" }), "reminder_at", "invalid_format");
    expectValidation(await createTask(owner, { title: "t", reminder_at: "2020-01-01T09:00:00Z" }), "reminder_at", "not_in_future");
    expectValidation(await createTask(owner, { title: "t", record: { type: "contact", id: randomUUID() } }), "record.type");
    expectValidation(await createTask(owner, { title: "t", record: { type: "customer" } }), "record.id", "required");
    const failed = await createTask(owner, { title: "t", time_zone: "UTC", time_zone_mode: "mine" });
    expectNoStore(failed);
    expect((await owner.get("/tasks/stats")).body.open).toBe(before);
  });

  it("404 for a missing, malformed or foreign task id, with no-store", async () => {
    const missing = await owner.get(`/tasks/${randomUUID()}`);
    expectError(missing, 404, "resource_missing");
    expectNoStore(missing);
    expectError(await owner.get("/tasks/not-a-uuid"), 404, "resource_missing");
    const other = await newAccount();
    const foreign = await newTask(api().withKey(other.ownerKey), { title: "Theirs" });
    expectError(await owner.get(`/tasks/${foreign.id}`), 404, "resource_missing");
    expectError(await patchTask(owner, foreign.id, { version: 1, title: "Mine now" }), 404, "resource_missing");
  });

  it("401 answers carry no-store too", async () => {
    const response = await api().get("/tasks");
    expect(response.status).toBe(401);
    expectNoStore(response);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describe("time zones", () => {
  let zoned: TestAccount;
  let paris: TaskUser;
  let plain: TaskUser;
  let tokyo: TaskUser;

  beforeAll(async () => {
    const created = await createAccount({ name: "Zoned", timeZone: "America/New_York" });
    zoned = { accountId: created.account_id, ownerUserId: created.user_id, ownerKeyId: created.key_id, ownerKey: created.api_key };
    paris = await taskUser(zoned, { timeZone: "Europe/Paris", permissions: ["tasks.assign"] });
    plain = await taskUser(zoned);
    tokyo = await taskUser(zoned, { timeZone: "Asia/Tokyo" });
  });

  it("default and mode mine: the caller's zone, else the account's", async () => {
    const client = api().withKey(paris.key);
    expect((await newTask(client, { title: "default" })).time_zone).toBe("Europe/Paris");
    expect((await newTask(client, { title: "mine", time_zone_mode: "mine" })).time_zone).toBe("Europe/Paris");
    expect((await newTask(api().withKey(plain.key), { title: "no user zone" })).time_zone).toBe("America/New_York");
    expect((await newTask(api().withKey(plain.key), { title: "explicit", time_zone: "australia/sydney" })).time_zone).toBe("Australia/Sydney");
  });

  it("null clears assignee_user_id, time_zone and time_zone_mode to their defaults: the caller, the caller's zone", async () => {
    const client = api().withKey(paris.key);
    const created = await newTask(client, {
      title: "nulls",
      assignee_user_id: null,
      time_zone: null,
      time_zone_mode: null,
      due_date: "2030-01-10",
      due_time: "09:00",
    });
    expect(created).toMatchObject({ time_zone: "Europe/Paris", due_at: "2030-01-10T08:00:00.000Z", assignee: { id: paris.userId } });
    const moved = await patchTask(client, created.id, { version: created.version, assignee_user_id: tokyo.userId, time_zone: "Asia/Tokyo" });
    expect(moved.body).toMatchObject({ time_zone: "Asia/Tokyo", due_at: "2030-01-10T00:00:00.000Z", assignee: { id: tokyo.userId } });
    const cleared = await patchTask(client, created.id, { version: moved.body.version, assignee_user_id: null, time_zone: null });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ time_zone: "Europe/Paris", due_at: "2030-01-10T08:00:00.000Z", assignee: { id: paris.userId } });
    // null with a mode is the mode's zone; both set is still refused.
    const assignee = await patchTask(client, created.id, {
      version: cleared.body.version,
      time_zone: null,
      time_zone_mode: "assignee",
      assignee_user_id: tokyo.userId,
    });
    expect(assignee.body).toMatchObject({ time_zone: "Asia/Tokyo" });
    expectValidation(await patchTask(client, created.id, { version: assignee.body.version, time_zone: "UTC", time_zone_mode: "mine" }), "time_zone_mode");
  });

  it("mode assignee: the assignee's zone, else the account's; UTC when the account has none set", async () => {
    const client = api().withKey(paris.key);
    const forTokyo = await newTask(client, {
      title: "for tokyo",
      assignee_user_id: tokyo.userId,
      time_zone_mode: "assignee",
      due_date: "2030-01-10",
      due_time: "09:00",
    });
    expect(forTokyo).toMatchObject({ time_zone: "Asia/Tokyo", due_at: "2030-01-10T00:00:00.000Z" });
    const forPlain = await newTask(client, { title: "for plain", assignee_user_id: plain.userId, time_zone_mode: "assignee" });
    expect(forPlain.time_zone).toBe("America/New_York");
    expect((await newTask(owner, { title: "utc account" })).time_zone).toBe("UTC");
  });

  it("Europe/London: the spring gap moves forward, the autumn overlap takes the first occurrence", async () => {
    const zone = { time_zone: "Europe/London" };
    expect((await newTask(owner, { title: "gap", due_date: "2030-03-31", due_time: "01:30", ...zone })).due_at).toBe("2030-03-31T01:30:00.000Z");
    expect((await newTask(owner, { title: "after gap", due_date: "2030-03-31", due_time: "03:00", ...zone })).due_at).toBe("2030-03-31T02:00:00.000Z");
    expect((await newTask(owner, { title: "overlap", due_date: "2030-10-27", due_time: "01:30", ...zone })).due_at).toBe("2030-10-27T00:30:00.000Z");
    expect((await newTask(owner, { title: "after overlap", due_date: "2030-10-27", due_time: "02:30", ...zone })).due_at).toBe("2030-10-27T02:30:00.000Z");
    const spring = await newTask(owner, { title: "date-only spring", due_date: "2030-03-31", ...zone });
    expect(spring).toMatchObject({ due_at: null, overdue_at: "2030-03-31T23:00:00.000Z" });
    const autumn = await newTask(owner, { title: "date-only autumn", due_date: "2030-10-26", ...zone });
    expect(autumn.overdue_at).toBe("2030-10-26T23:00:00.000Z");
  });

  it("America/New_York: the spring gap moves forward, the autumn overlap takes the first occurrence", async () => {
    const zone = { time_zone: "America/New_York" };
    expect((await newTask(owner, { title: "gap", due_date: "2030-03-10", due_time: "02:30", ...zone })).due_at).toBe("2030-03-10T07:30:00.000Z");
    expect((await newTask(owner, { title: "overlap", due_date: "2030-11-03", due_time: "01:30", ...zone })).due_at).toBe("2030-11-03T05:30:00.000Z");
    expect((await newTask(owner, { title: "before", due_date: "2030-11-02", due_time: "09:00", ...zone })).due_at).toBe("2030-11-02T13:00:00.000Z");
    expect((await newTask(owner, { title: "after", due_date: "2030-11-04", due_time: "09:00", ...zone })).due_at).toBe("2030-11-04T14:00:00.000Z");
    const dateOnly = await newTask(owner, { title: "date-only", due_date: "2030-11-03", ...zone });
    expect(dateOnly.overdue_at).toBe("2030-11-04T05:00:00.000Z");
  });

  it("changing the zone keeps the local date and time and moves the instants", async () => {
    const task = await newTask(owner, { title: "moves", due_date: "2030-06-01", due_time: "12:00", time_zone: "Europe/London" });
    expect(task.due_at).toBe("2030-06-01T11:00:00.000Z");
    const moved = await patchTask(owner, task.id, { version: 1, time_zone: "America/New_York" });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({
      version: 2,
      due_date: "2030-06-01",
      due_time: "12:00",
      due_at: "2030-06-01T16:00:00.000Z",
      time_zone: "America/New_York",
    });
    const dateOnly = await patchTask(owner, task.id, { version: 2, due_time: null });
    expect(dateOnly.body).toMatchObject({ version: 3, due_time: null, due_at: null, overdue_at: "2030-06-02T04:00:00.000Z" });
    const cleared = await patchTask(owner, task.id, { version: 3, due_date: null });
    expect(cleared.body).toMatchObject({ due_date: null, due_time: null, due_at: null, overdue_at: null });
    expectValidation(await patchTask(owner, task.id, { version: 4, due_time: "10:00" }), "due_time", "requires_due_date");
    expectValidation(await patchTask(owner, task.id, { version: 4, time_zone: "UTC", time_zone_mode: "assignee" }), "time_zone_mode");
  });
});

describe("update with optimistic versions", () => {
  it("requires the current version: stale is 409 task_conflict and changes nothing", async () => {
    const task = await newTask(owner, { title: "Versioned", description: "secret words" });
    expectValidation(await patchTask(owner, task.id, { title: "x" }), "version", "required");
    expectValidation(await patchTask(owner, task.id, { version: 0, title: "x" }), "version");
    const next = await patchTask(owner, task.id, { version: 1, title: "Second" });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ version: 2, title: "Second", description: "secret words" });
    expect(next.body.modified > task.modified).toBe(true);
    const stale = await patchTask(owner, task.id, { version: 1, title: "Third" });
    expectError(stale, 409, "task_conflict", "version");
    expectNoStore(stale);
    expect((await owner.get(`/tasks/${task.id}`)).body).toEqual(next.body);
    const missingKey = await owner.patch(`/tasks/${task.id}`, { version: 2, title: "No key" });
    expectError(missingKey, 400, "idempotency_key_required");
  });

  it("concurrent updates with one version: exactly one wins, the others are 409", async () => {
    const task = await newTask(owner, { title: "Race" });
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => patchTask(owner, task.id, { version: 1, title: `Writer ${i}` })));
    const winners = responses.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of responses.filter((r) => r.status !== 200)) expectError(loser, 409, "task_conflict");
    const stored = (await owner.get(`/tasks/${task.id}`)).body;
    expect(stored).toMatchObject({ version: 2, title: winners[0]!.body.title });
    const activity = (await owner.get(`/tasks/${task.id}/activity`)).body.data;
    expect(activity.map((e: { version: number }) => e.version)).toEqual([2, 1]);
  });

  it("changes only the fields sent; null clears; a request that changes nothing keeps the version", async () => {
    const task = await newTask(owner, { title: "Partial", description: "keep me", due_date: "2030-01-01", due_time: "10:00", time_zone: "UTC" });
    const same = await patchTask(owner, task.id, { version: 1, title: "Partial" });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(task);
    const cleared = await patchTask(owner, task.id, { version: 1, description: null });
    expect(cleared.body).toMatchObject({ version: 2, description: null, title: "Partial", due_date: "2030-01-01", due_time: "10:00" });
    const noDate = await patchTask(owner, task.id, { version: 2, due_date: null });
    expect(noDate.body).toMatchObject({ version: 3, due_date: null, due_time: null, due_at: null });
  });

  it("status moves open -> completed | cancelled -> open; a closed task only changes by a reopen", async () => {
    const task = await newTask(owner, { title: "Lifecycle" });
    const done = await patchTask(owner, task.id, { version: 1, status: "completed" });
    expect(done.body).toMatchObject({ status: "completed", version: 2, available_actions: ["reopen"] });
    expect(done.body.completed_at).toBe(done.body.modified);
    expectError(await patchTask(owner, task.id, { version: 2, status: "cancelled" }), 409, "task_transition_not_allowed", "status");
    const edit = await patchTask(owner, task.id, { version: 2, title: "Edited while done" });
    expectError(edit, 409, "task_transition_not_allowed", "title");
    expect((await owner.get(`/tasks/${task.id}`)).body.title).toBe("Lifecycle");
    const reopened = await patchTask(owner, task.id, { version: 2, status: "open", title: "Reopened" });
    expect(reopened.body).toMatchObject({
      status: "open",
      version: 3,
      title: "Reopened",
      completed_at: null,
      available_actions: ["edit", "complete", "cancel"],
    });
    const cancelled = await patchTask(owner, task.id, { version: 3, status: "cancelled" });
    expect(cancelled.body).toMatchObject({ status: "cancelled", completed_at: null, available_actions: ["reopen"] });
    expectValidation(await patchTask(owner, task.id, { version: 4, status: "done" }), "status");
    const activity = (await owner.get(`/tasks/${task.id}/activity`)).body.data;
    expect(activity.map((e: { action: string }) => e.action)).toEqual(["cancelled", "reopened", "completed", "created"]);
    expect(activity[1].changed_fields).toEqual(["title", "status"]);
  });
});

describe("permissions and visibility", () => {
  let staff: TaskUser;
  let assigner: TaskUser;
  let manager: TaskUser;
  let bystander: TaskUser;

  beforeAll(async () => {
    staff = await taskUser(account);
    assigner = await taskUser(account, { permissions: ["tasks.assign"] });
    manager = await taskUser(account, { permissions: ["tasks.manage_all"] });
    bystander = await taskUser(account);
  });

  it("assigning another user needs tasks.assign; the assignee must be an active user of the account", async () => {
    const denied = await createTask(api().withKey(staff.key), { title: "for someone", assignee_user_id: assigner.userId });
    expectError(denied, 403, "permission_denied", "assignee_user_id");
    expectNoStore(denied);
    const self = await createTask(api().withKey(staff.key), { title: "for me", assignee_user_id: staff.userId });
    expect(self.status).toBe(201);
    const assigned = await newTask(api().withKey(assigner.key), { title: "for staff", assignee_user_id: staff.userId });
    expect(assigned.assignee).toEqual({ id: staff.userId, name: staff.name, photo_url: null, active: true });
    expectValidation(await createTask(owner, { title: "nobody", assignee_user_id: randomUUID() }), "assignee_user_id", "invalid_reference");
    const inactive = await taskUser(account);
    await updateUser(inactive.userId, { status: "inactive" });
    expectValidation(await createTask(owner, { title: "inactive", assignee_user_id: inactive.userId }), "assignee_user_id");
    const other = await newAccount();
    expectValidation(await createTask(owner, { title: "foreign", assignee_user_id: other.ownerUserId }), "assignee_user_id");
  });

  it("a user sees tasks assigned to them or created by them; tasks.manage_all sees all; others get 404", async () => {
    const created = await newTask(api().withKey(assigner.key), { title: "made by assigner", assignee_user_id: staff.userId });
    for (const viewer of [assigner, staff, manager]) {
      const got = await api().withKey(viewer.key).get(`/tasks/${created.id}`);
      expect(got.status, `${viewer.name}: ${got.text}`).toBe(200);
    }
    expectError(await api().withKey(bystander.key).get(`/tasks/${created.id}`), 404, "resource_missing");
    expectError(await patchTask(api().withKey(bystander.key), created.id, { version: 1, title: "hijack" }), 404, "resource_missing");
    expectError(await api().withKey(bystander.key).get(`/tasks/${created.id}/activity`), 404, "resource_missing");
    // The creator (not the assignee) may change it; so may the manager.
    expect((await patchTask(api().withKey(assigner.key), created.id, { version: 1, title: "by creator" })).status).toBe(200);
    expect((await patchTask(api().withKey(manager.key), created.id, { version: 2, title: "by manager" })).status).toBe(200);
  });

  it("reassigning: to oneself is allowed, to another user needs tasks.assign", async () => {
    const task = await newTask(api().withKey(assigner.key), { title: "pass around", assignee_user_id: staff.userId });
    expectError(
      await patchTask(api().withKey(staff.key), task.id, { version: 1, assignee_user_id: bystander.userId }),
      403,
      "permission_denied",
      "assignee_user_id",
    );
    const manager_ = api().withKey(manager.key);
    expectError(await patchTask(manager_, task.id, { version: 1, assignee_user_id: bystander.userId }), 403, "permission_denied");
    const taken = await patchTask(manager_, task.id, { version: 1, assignee_user_id: manager.userId });
    expect(taken.body.assignee.id).toBe(manager.userId);
    // The previous assignee no longer sees it (neither assignee nor creator).
    expectError(await api().withKey(staff.key).get(`/tasks/${task.id}`), 404, "resource_missing");
    const back = await patchTask(api().withKey(assigner.key), task.id, { version: 2, assignee_user_id: staff.userId });
    expect(back.body.assignee.id).toBe(staff.userId);
    expect((await api().withKey(staff.key).get(`/tasks/${task.id}/activity`)).body.data[0].changed_fields).toEqual(["assignee"]);
  });

  it("scopes: a read-only key reads (no available actions) and cannot write", async () => {
    const reader = await taskUser(account, { scopes: ["tasks:read"] });
    const readerClient = api().withKey(reader.key);
    const own = await newTask(owner, { title: "assigned to reader", assignee_user_id: reader.userId });
    const got = await readerClient.get(`/tasks/${own.id}`);
    expect(got.body.available_actions).toEqual([]);
    const denied = await createTask(readerClient, { title: "no" });
    expectError(denied, 403, "insufficient_scope", "tasks:write");
    expectNoStore(denied);
    expectError(await patchTask(readerClient, own.id, { version: 1, title: "no" }), 403, "insufficient_scope");
    expect((await readerClient.post("/tasks/reconcile", { known: [{ id: own.id, version: 1 }] })).status).toBe(200);
  });
});

describe("linked records", () => {
  let customer: string;
  let supplier: string;
  let item: string;
  let staff: TaskUser;
  let staffCustomer: string;

  beforeAll(async () => {
    customer = (await owner.post("/customers", { name: "Linked Customer" }, { idempotencyKey: idempotencyKey() })).body.id;
    supplier = (await owner.post("/suppliers", { name: "Linked Supplier" }, { idempotencyKey: idempotencyKey() })).body.id;
    item = (await owner.post("/items", { name: "Linked Item" })).body.id;
    staff = await taskUser(account, { permissions: ["tasks.manage_all", "inventory.list"] });
    staffCustomer = (await api().withKey(staff.key).post("/customers", { name: "Staff's own customer" }, { idempotencyKey: idempotencyKey() })).body.id;
  });

  it("links a visible record and previews it as {type, id, name, number}", async () => {
    const task = await newTask(owner, { title: "about a customer", record: { type: "customer", id: customer.toUpperCase() } });
    expect(Object.keys(task.record)).toEqual(["type", "id", "name", "number"]);
    expect(task.record).toMatchObject({ type: "customer", id: customer, name: "Linked Customer" });
    expect(typeof task.record.number).toBe("number");
    const onItem = await newTask(owner, { title: "about an item", record: { type: "item", id: item } });
    expect(onItem.record).toMatchObject({ type: "item", id: item, name: "Linked Item" });
  });

  it("a missing record, one of another kind or another account, or one the caller cannot see is 422 on record.id", async () => {
    expectValidation(await createTask(owner, { title: "t", record: { type: "customer", id: randomUUID() } }), "record.id", "invalid_reference");
    expectValidation(await createTask(owner, { title: "t", record: { type: "supplier", id: customer } }), "record.id");
    expectValidation(await createTask(owner, { title: "t", record: { type: "prospect", id: supplier } }), "record.id");
    const other = await newAccount();
    const foreign = (await api().withKey(other.ownerKey).post("/customers", { name: "Foreign" }, { idempotencyKey: idempotencyKey() })).body.id;
    expectValidation(await createTask(owner, { title: "t", record: { type: "customer", id: foreign } }), "record.id");
    // staff without records.view_all cannot see the owner's customer
    expectValidation(await createTask(api().withKey(staff.key), { title: "t", record: { type: "customer", id: customer } }), "record.id");
    const task = await newTask(owner, { title: "relink" });
    expectValidation(await patchTask(owner, task.id, { version: 1, record: { type: "item", id: randomUUID() } }), "record.id");
    expect((await owner.get(`/tasks/${task.id}`)).body).toMatchObject({ version: 1, record: null });
  });

  it("linking needs the read scope of the record's kind", async () => {
    const limited = await taskUser(account, { permissions: ["records.view_all"], scopes: ["tasks:read", "tasks:write"] });
    expectError(
      await createTask(api().withKey(limited.key), { title: "t", record: { type: "customer", id: customer } }),
      403,
      "insufficient_scope",
      "customers:read",
    );
  });

  it("the preview follows the caller's live access: visibility, permission and scope, else {available: false}", async () => {
    const task = await newTask(api().withKey(staff.key), { title: "staff's customer", record: { type: "customer", id: staffCustomer } });
    expect(task.record).toMatchObject({ name: "Staff's own customer" });
    expect((await owner.get(`/tasks/${task.id}`)).body.record.name).toBe("Staff's own customer"); // owner sees every record
    const manager = await taskUser(account, { permissions: ["tasks.manage_all"] });
    const hidden = (await api().withKey(manager.key).get(`/tasks/${task.id}`)).body.record;
    expect(hidden).toEqual({ available: false }); // sees the task, not the customer
    const noScope = await taskUser(account, { role: "owner", scopes: ["tasks:read"] });
    expect((await api().withKey(noScope.key).get(`/tasks/${task.id}`)).body.record).toEqual({ available: false });
    const onItem = await newTask(owner, { title: "item preview", record: { type: "item", id: item } });
    expect((await api().withKey(manager.key).get(`/tasks/${onItem.id}`)).body.record).toEqual({ available: false }); // no inventory.list
    expect((await api().withKey(staff.key).get(`/tasks/${onItem.id}`)).body.record.name).toBe("Linked Item");
    // The permission is live: granting records.view_all shows it at once.
    await updateUser(manager.userId, { permissions: ["tasks.manage_all", "records.view_all"] });
    expect((await api().withKey(manager.key).get(`/tasks/${task.id}`)).body.record.name).toBe("Staff's own customer");
  });

  it("a linked record deleted or renamed a moment ago shows as it is now: no stream processor runs here", async () => {
    const created = await owner.post("/customers", { name: "Soon Renamed" }, { idempotencyKey: idempotencyKey() });
    expect(created.status, created.text).toBe(201);
    const task = await newTask(owner, { title: "live preview", record: { type: "customer", id: created.body.id } });
    expect(task.record).toMatchObject({ name: "Soon Renamed" });
    const renamed = await owner.patch(`/customers/${created.body.id}`, { name: "Renamed Now" }, { idempotencyKey: idempotencyKey() });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await owner.get(`/tasks/${task.id}`)).body.record).toMatchObject({ id: created.body.id, name: "Renamed Now" });
    const deleted = await owner.request("DELETE", `/customers/${created.body.id}`, undefined, { idempotencyKey: idempotencyKey() });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await owner.get(`/tasks/${task.id}`)).body.record).toEqual({ available: false });
    const listed = await owner.get(`/tasks?q=${encodeURIComponent("live preview")}`);
    expect(listed.body.data.map((t: { record: unknown }) => t.record)).toEqual([{ available: false }]);
    const reconciled = await owner.post("/tasks/reconcile", { known: [{ id: task.id, version: task.version }] });
    expect(reconciled.body.data[0].record).toEqual({ available: false });
  });

  it("links documents and kits: previews follow the kind's permission and assignee boundary; unknown ids and kits of archived items are 422", async () => {
    const location = (await owner.post("/locations", { name: "Linked Location", short_name: "LL" }, { idempotencyKey: idempotencyKey() })).body.id;
    const other = (await owner.post("/locations", { name: "Other Location", short_name: "OL" }, { idempotencyKey: idempotencyKey() })).body.id;
    await owner.post(`/items/${item}/adjustments`, { location_id: location, quantity: 5 });
    const order = (
      await owner.post("/purchase-orders", { supplier_id: supplier, location_id: location, name: "Restock order", lines: [{ item_id: item, quantity: 1 }] })
    ).body;
    const transfer = (
      await owner.post("/stock-transfers", { origin_location_id: location, destination_location_id: other, lines: [{ item_id: item, quantity: 1 }] })
    ).body;
    const onOrder = await newTask(owner, { title: "about an order", record: { type: "purchase_order", id: order.id } });
    expect(onOrder.record).toEqual({ type: "purchase_order", id: order.id, name: "Restock order", number: order.purchase_order_number });
    const onTransfer = await newTask(owner, { title: "about a transfer", record: { type: "stock_transfer", id: transfer.id } });
    expect(onTransfer.record).toEqual({
      type: "stock_transfer",
      id: transfer.id,
      name: `Stock transfer ${transfer.stock_transfer_number}`,
      number: transfer.stock_transfer_number,
    });
    // The staff user (tasks.manage_all, no purchase-order permission, not its assignee) sees the tasks, not the order.
    expect((await api().withKey(staff.key).get(`/tasks/${onOrder.id}`)).body.record).toEqual({ available: false });
    for (const type of ["invoice", "estimate", "purchase_order", "sales_order", "stock_transfer", "kit"]) {
      expectValidation(await createTask(owner, { title: `about a ${type}`, record: { type, id: randomUUID() } }), "record.id");
    }
    // A kit is linkable while GET /kits/{id} serves it: not once its assembled item is archived.
    const kitItem = (await owner.post("/items", { name: "Linked kit" })).body.id;
    const { kit_id: kitId } = await createKit({ accountId: account.accountId, itemId: kitItem, method: "manual", components: [{ itemId: item, quantity: 2 }] });
    const onKit = await newTask(owner, { title: "about a kit", record: { type: "kit", id: kitId } });
    expect(onKit.record).toEqual({ type: "kit", id: kitId, name: "Linked kit", number: expect.any(Number) });
    expect((await owner.patch(`/items/${kitItem}`, { archived: true })).status).toBe(200);
    expect((await owner.get(`/kits/${kitId}`)).status).toBe(404);
    expectValidation(await createTask(owner, { title: "about an archived kit", record: { type: "kit", id: kitId } }), "record.id");
    expect((await owner.get(`/tasks/${onKit.id}`)).body.record).toEqual({ available: false });
  });

  it("unlinking with null, relinking to another record", async () => {
    const task = await newTask(owner, { title: "relinked", record: { type: "customer", id: customer } });
    const moved = await patchTask(owner, task.id, { version: 1, record: { type: "supplier", id: supplier } });
    expect(moved.body.record).toMatchObject({ type: "supplier", id: supplier, name: "Linked Supplier" });
    const unlinked = await patchTask(owner, task.id, { version: 2, record: null });
    expect(unlinked.body.record).toBeNull();
    expect((await owner.get(`/tasks/${task.id}/activity`)).body.data.map((e: { changed_fields: string[] }) => e.changed_fields)).toEqual([
      ["record"],
      ["record"],
      ["title", "assignee", "time_zone", "record"],
    ]);
  });
});
