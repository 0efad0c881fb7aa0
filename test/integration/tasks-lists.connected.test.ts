import { randomUUID } from "node:crypto";
import { DateTime } from "luxon";
import { beforeAll, describe, expect, it } from "vitest";
import { newDbUsage, withDbUsage } from "../../lib/db/metrics.js";
import { listTasks, taskStats } from "../../lib/domain/tasks/lists.js";
import { listReminders } from "../../lib/domain/tasks/reminders.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { idempotencyKey, newAccount, updateUser, type TestAccount } from "../support/fixtures.js";
import { allPages, expectNoStore, newTask, patchTask, principalOf, TASK_KEYS, taskUser, type TaskUser } from "../support/tasks.js";

/**
 * Task lists, stats, activity, assignees and reconcile (spec part 2, section 4.6): cursor
 * pages ordered by deadline then UUID (undated last), filters, signed cursors, the DynamoDB
 * budget of a page (one Query after authentication) and of stats (one Query).
 */
const api = useApiServer();

let account: TestAccount;
let owner: ApiClient;

beforeAll(async () => {
  account = await newAccount();
  owner = api().withKey(account.ownerKey);
});

const ids = (tasks: { id: string }[]) => tasks.map((t) => t.id);

describe("list order and cursor pages", () => {
  let lister: TaskUser;
  let client: ApiClient;
  let expected: string[];

  beforeAll(async () => {
    lister = await taskUser(account);
    client = api().withKey(lister.key);
    // Deadlines: instants across zones, date-only ends of day, equal deadlines, undated.
    const made = [
      await newTask(client, { title: "undated b" }),
      await newTask(client, { title: "ny 09:00", due_date: "2030-01-10", due_time: "09:00", time_zone: "America/New_York" }), // 14:00Z
      await newTask(client, { title: "london date-only", due_date: "2030-01-10", time_zone: "Europe/London" }), // 2030-01-11T00:00Z
      await newTask(client, { title: "tokyo 09:00", due_date: "2030-01-10", due_time: "09:00", time_zone: "Asia/Tokyo" }), // 00:00Z
      await newTask(client, { title: "london 14:00", due_date: "2030-01-10", due_time: "14:00", time_zone: "Europe/London" }), // 14:00Z (tie)
      await newTask(client, { title: "undated a" }),
      await newTask(client, { title: "past", due_date: "2020-01-01", time_zone: "UTC" }),
    ];
    const byDeadline = made.map((t) => ({ id: t.id as string, key: (t.overdue_at as string | null) ?? "~" }));
    byDeadline.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1));
    expected = byDeadline.map((t) => t.id);
  });

  it("orders by deadline (overdue_at) then UUID, undated last; pages follow with next_cursor", async () => {
    const first = await client.get("/tasks", { limit: 3 });
    expect(first.status).toBe(200);
    expectNoStore(first);
    expect(Object.keys(first.body)).toEqual(["object", "data", "next_cursor"]);
    expect(first.body.object).toBe("list");
    expect(Object.keys(first.body.data[0])).toEqual(TASK_KEYS);
    expect(ids(first.body.data)).toEqual(expected.slice(0, 3));
    const all = await allPages(client, "/tasks", { limit: 3 });
    expect(ids(all)).toEqual(expected);
    const titles = all.map((t) => t.title);
    expect(titles.slice(0, 2)).toEqual(["past", "tokyo 09:00"]);
    expect(titles.slice(-2).sort()).toEqual(["undated a", "undated b"]);
    const whole = await client.get("/tasks", { limit: 100 });
    expect(ids(whole.body.data)).toEqual(expected);
    expect(whole.body.next_cursor).toBeNull();
    // An exact multiple of the page size ends without an empty page.
    const exact = await client.get("/tasks", { limit: 7 });
    expect(exact.body.data).toHaveLength(7);
    expect(exact.body.next_cursor).toBeNull();
  });

  it("limit is 1 to 100, default 40", async () => {
    for (const limit of ["0", "101", "abc", "-1"]) expectError(await client.get("/tasks", { limit }), 422, "invalid_query_parameter", "limit");
    expect((await client.get("/tasks", { limit: 1 })).body.data).toHaveLength(1);
  });

  it("a rejected cursor is 400 invalid_cursor: tampered, other filters, another user; restart without it", async () => {
    const first = await client.get("/tasks", { limit: 2 });
    const cursor = first.body.next_cursor as string;
    const [prefix, body, signature] = cursor.split(".");
    const payload = JSON.parse(Buffer.from(body!, "base64url").toString());
    const forged = `${prefix}.${Buffer.from(JSON.stringify({ ...payload, p: "0" })).toString("base64url")}.${signature}`;
    for (const bad of [forged, `${cursor}x`, "garbage", cursor.replace(/^tc1/, "tc2")]) {
      const response = await client.get("/tasks", { limit: 2, cursor: bad });
      expectError(response, 400, "invalid_cursor", "cursor");
      expect(response.body.error.message).toContain("restart without cursor");
      expectNoStore(response);
    }
    expectError(await client.get("/tasks", { limit: 2, cursor, status: "completed" }), 400, "invalid_cursor");
    expectError(await client.get("/tasks", { limit: 2, cursor, q: "london" }), 400, "invalid_cursor");
    expectError(await owner.get("/tasks", { limit: 2, cursor }), 400, "invalid_cursor");
    expectError(await client.get("/tasks/reminders", { cursor }), 400, "invalid_cursor");
    // The same filters (a different limit is fine) continue.
    const next = await client.get("/tasks", { limit: 5, cursor });
    expect(ids(next.body.data)).toEqual(expected.slice(2, 7));
  });

  it("a list page costs one DynamoDB Query after authentication (unfiltered and filtered)", async () => {
    const principal = principalOf(account, lister.userId, "staff");
    for (const query of [{}, { limit: "2" }, { q: "london" }, { due_from: "2030-01-01" }]) {
      const usage = newDbUsage();
      const page = await withDbUsage(usage, () => listTasks(principal, query));
      expect(page.data.length).toBeGreaterThan(0);
      expect(usage.commands).toEqual(["Query"]);
      if (page.next_cursor) {
        const next = newDbUsage();
        await withDbUsage(next, () => listTasks(principal, { ...query, cursor: page.next_cursor! }));
        expect(next.commands).toEqual(["Query"]);
      }
    }
  });
});

describe("filters and scopes", () => {
  let alice: TaskUser;
  let bob: TaskUser;
  let manager: TaskUser;
  let customer: string;
  const tag = randomUUID().slice(0, 6);

  beforeAll(async () => {
    alice = await taskUser(account, { permissions: ["tasks.assign", "records.view_all"] });
    bob = await taskUser(account);
    manager = await taskUser(account, { permissions: ["tasks.manage_all", "records.view_all"] });
    customer = (await owner.post("/customers", { name: "Filtered Customer" }, { idempotencyKey: idempotencyKey() })).body.id;
    const a = api().withKey(alice.key);
    await newTask(a, { title: `Alpha ${tag} Report`, due_date: "2030-02-01", record: { type: "customer", id: customer } });
    await newTask(a, { title: `beta ${tag}`, due_date: "2030-03-01" });
    await newTask(a, { title: `Gamma ${tag} report`, assignee_user_id: bob.userId, due_date: "2030-02-15", record: { type: "customer", id: customer } });
    const done = await newTask(a, { title: `Done ${tag}`, due_date: "2030-01-01" });
    await patchTask(a, done.id, { version: 1, status: "completed" });
  });

  const titles = (tasks: { title: string }[]) => tasks.map((t) => t.title);

  it("scope mine (default) lists the open tasks assigned to the caller; status selects others", async () => {
    const a = api().withKey(alice.key);
    expect(titles(await allPages(a, "/tasks"))).toEqual([`Alpha ${tag} Report`, `beta ${tag}`]);
    expect(titles(await allPages(a, "/tasks", { status: "completed" }))).toEqual([`Done ${tag}`]);
    expect(await allPages(a, "/tasks", { status: "cancelled" })).toEqual([]);
    expect(titles(await allPages(api().withKey(bob.key), "/tasks"))).toEqual([`Gamma ${tag} report`]);
    expectError(await a.get("/tasks", { status: "done" }), 422, "invalid_query_parameter", "status");
    expectError(await a.get("/tasks", { scope: "everyone" }), 422, "invalid_query_parameter", "scope");
  });

  it("scope all and recovery need tasks.manage_all", async () => {
    for (const scope of ["all", "recovery"]) {
      const denied = await api().withKey(alice.key).get("/tasks", { scope });
      expectError(denied, 403, "permission_denied", "scope");
      expectNoStore(denied);
      expectError(await api().withKey(alice.key).get("/tasks/stats", { scope }), 403, "permission_denied", "scope");
    }
    const all = titles(await allPages(api().withKey(manager.key), "/tasks", { scope: "all", q: tag }));
    expect(all).toEqual([`Alpha ${tag} Report`, `Gamma ${tag} report`, `beta ${tag}`]);
  });

  it("assignee narrows the scope; mine with another assignee is empty", async () => {
    const m = api().withKey(manager.key);
    expect(titles(await allPages(m, "/tasks", { scope: "all", assignee: bob.userId, q: tag }))).toEqual([`Gamma ${tag} report`]);
    expect(await allPages(api().withKey(alice.key), "/tasks", { assignee: bob.userId })).toEqual([]);
    expect(titles(await allPages(api().withKey(alice.key), "/tasks", { assignee: alice.userId }))).toEqual([`Alpha ${tag} Report`, `beta ${tag}`]);
    expectError(await m.get("/tasks", { assignee: "nobody" }), 422, "invalid_query_parameter", "assignee");
  });

  it("q searches titles case-insensitively (up to 100 characters)", async () => {
    const a = api().withKey(alice.key);
    expect(titles(await allPages(a, "/tasks", { q: "REPORT" }))).toEqual([`Alpha ${tag} Report`]);
    expect(titles(await allPages(api().withKey(manager.key), "/tasks", { scope: "all", q: `${tag} report` }))).toEqual([
      `Alpha ${tag} Report`,
      `Gamma ${tag} report`,
    ]);
    expectError(await a.get("/tasks", { q: "x".repeat(101) }), 422, "invalid_query_parameter", "q");
  });

  it("due_from and due_to filter the stored due date", async () => {
    const a = api().withKey(alice.key);
    expect(titles(await allPages(a, "/tasks", { due_from: "2030-02-01", due_to: "2030-02-28" }))).toEqual([`Alpha ${tag} Report`]);
    expect(titles(await allPages(a, "/tasks", { due_from: "2030-02-02" }))).toEqual([`beta ${tag}`]);
    expect(titles(await allPages(a, "/tasks", { due_to: "2030-02-01" }))).toEqual([`Alpha ${tag} Report`]);
    expectError(await a.get("/tasks", { due_from: "2030-03-01", due_to: "2030-02-01" }), 422, "invalid_query_parameter", "due_to");
    expectError(await a.get("/tasks", { due_from: "2030-13-01" }), 422, "invalid_query_parameter", "due_from");
  });

  it("record_type with record_id lists the record's tasks (within the scope), normalized, with access checked", async () => {
    const query = { record_type: "Customer", record_id: customer.toUpperCase() };
    expect(titles(await allPages(api().withKey(manager.key), "/tasks", { ...query, scope: "all" }))).toEqual([`Alpha ${tag} Report`, `Gamma ${tag} report`]);
    // bob cannot see the owner's customer: the filter is refused (even though a task of it is his)
    expectError(await api().withKey(bob.key).get("/tasks", query), 422, "invalid_query_parameter", "record_id");
    expect(titles(await allPages(owner, "/tasks", query))).toEqual([]); // none assigned to the owner
    const m = api().withKey(manager.key);
    expect(titles(await allPages(m, "/tasks", { ...query, scope: "all", assignee: bob.userId }))).toEqual([`Gamma ${tag} report`]);
    expectError(await m.get("/tasks", { record_type: "customer" }), 422, "invalid_query_parameter", "record_id");
    expectError(await m.get("/tasks", { record_id: customer }), 422, "invalid_query_parameter", "record_type");
    expectError(await m.get("/tasks", { record_type: "planet", record_id: customer }), 422, "invalid_query_parameter", "record_type");
    expectError(await m.get("/tasks", { record_type: "customer", record_id: randomUUID() }), 422, "invalid_query_parameter", "record_id");
    expectError(await m.get("/tasks", { record_type: "supplier", record_id: customer }), 422, "invalid_query_parameter", "record_id");
    const noView = await taskUser(account, { permissions: ["tasks.manage_all"] });
    expectError(
      await api()
        .withKey(noView.key)
        .get("/tasks", { ...query, scope: "all" }),
      422,
      "invalid_query_parameter",
      "record_id",
    );
    const noScope = await taskUser(account, { role: "owner", scopes: ["tasks:read"] });
    expectError(await api().withKey(noScope.key).get("/tasks", query), 403, "insufficient_scope", "customers:read");
  });

  it("filtered pages may be short but never skip or repeat a task", async () => {
    const m = api().withKey(manager.key);
    const tasks = await allPages(m, "/tasks", { scope: "all", q: tag, limit: 1 });
    expect(titles(tasks)).toEqual([`Alpha ${tag} Report`, `Gamma ${tag} report`, `beta ${tag}`]);
  });
});

describe("stats", () => {
  let solo: TaskUser;
  let client: ApiClient;
  let statsAccount: TestAccount;
  /** Whether the other due date of this week is already past (then it is overdue too). */
  let earlierThisWeek = false;

  beforeAll(async () => {
    statsAccount = await newAccount();
    solo = await taskUser(statsAccount, { permissions: ["tasks.assign"] });
    client = api().withKey(solo.key);
    const today = DateTime.utc().toISODate()!;
    const tomorrow = DateTime.utc().plus({ days: 1 }).toISODate()!;
    const week = DateTime.utc().startOf("week");
    const otherDayThisWeek = [0, 1, 2, 3, 4, 5, 6].map((d) => week.plus({ days: d }).toISODate()!).find((d) => d !== today)!;
    earlierThisWeek = otherDayThisWeek < today;
    await newTask(client, { title: "overdue", due_date: "2020-01-01", time_zone: "UTC" });
    await newTask(client, { title: "overdue timed", due_date: "2021-06-01", due_time: "10:00", time_zone: "UTC" });
    await newTask(client, { title: "today", due_date: today, time_zone: "UTC" });
    await newTask(client, { title: "this week", due_date: otherDayThisWeek, time_zone: "UTC" });
    await newTask(client, { title: "far", due_date: "2099-01-01", time_zone: "UTC" });
    await newTask(client, { title: "undated" });
    const done = await newTask(client, { title: "done", due_date: "2020-01-01", time_zone: "UTC" });
    await patchTask(client, done.id, { version: 1, status: "completed" });
    const cancelled = await newTask(client, { title: "cancelled", due_date: tomorrow, time_zone: "UTC" });
    await patchTask(client, cancelled.id, { version: 1, status: "cancelled" });
    // Assigned to someone else: not mine, counted in the account's scope.
    const owner_ = api().withKey(statsAccount.ownerKey);
    await newTask(owner_, { title: "owner's overdue", due_date: "2020-01-01", time_zone: "UTC" });
  });

  it("counts open, completed, overdue, current week and the caller's badge (scope mine)", async () => {
    const response = await client.get("/tasks/stats");
    expect(response.status).toBe(200);
    expectNoStore(response);
    expect(Object.keys(response.body)).toEqual([
      "object",
      "scope",
      "record_type",
      "record_id",
      "open",
      "completed",
      "overdue",
      "current_week",
      "task_badge_count",
    ]);
    const overdue = 2 + Number(earlierThisWeek);
    expect(response.body).toEqual({
      object: "task_stats",
      scope: "mine",
      record_type: null,
      record_id: null,
      open: 6,
      completed: 1,
      overdue,
      current_week: 2,
      task_badge_count: overdue + 1, // the overdue ones and the one due today
    });
  });

  it("scope all counts the account; the badge stays the caller's own", async () => {
    await updateUser(solo.userId, { permissions: ["tasks.assign", "tasks.manage_all"] });
    const mine = (await client.get("/tasks/stats")).body;
    const all = (await client.get("/tasks/stats", { scope: "all" })).body;
    expect(all).toMatchObject({ scope: "all", open: mine.open + 1, completed: 1, overdue: mine.overdue + 1, task_badge_count: mine.task_badge_count });
    const recovery = (await client.get("/tasks/stats", { scope: "recovery" })).body;
    expect(recovery).toMatchObject({ scope: "recovery", open: 0, completed: 0, overdue: 0, current_week: 0, task_badge_count: mine.task_badge_count });
  });

  it("with a record: the record's tasks in the scope, echoed normalized; the badge is unchanged", async () => {
    const customer = (await client.post("/customers", { name: "Stats customer" }, { idempotencyKey: idempotencyKey() })).body.id as string;
    await newTask(client, { title: "on record overdue", due_date: "2020-01-01", time_zone: "UTC", record: { type: "customer", id: customer } });
    const closed = await newTask(client, { title: "on record closed", record: { type: "customer", id: customer } });
    await patchTask(client, closed.id, { version: 1, status: "completed" });
    const mine = (await client.get("/tasks/stats")).body;
    const stats = await client.get("/tasks/stats", { record_type: "CUSTOMER", record_id: customer.toUpperCase() });
    expect(stats.body).toEqual({
      object: "task_stats",
      scope: "mine",
      record_type: "customer",
      record_id: customer,
      open: 1,
      completed: 1,
      overdue: 1,
      current_week: 0,
      task_badge_count: mine.task_badge_count,
    });
    expectError(await client.get("/tasks/stats", { record_type: "customer" }), 422, "invalid_query_parameter", "record_id");
    expectError(await client.get("/tasks/stats", { record_type: "customer", record_id: randomUUID() }), 422, "invalid_query_parameter", "record_id");
  });

  it("stats cost one DynamoDB Query after authentication", async () => {
    for (const scope of ["mine", "all", "recovery"] as const) {
      const usage = newDbUsage();
      await withDbUsage(usage, () => taskStats(principalOf(statsAccount, solo.userId), { scope }));
      expect(usage.commands, scope).toEqual(["Query"]);
    }
    const inbox = newDbUsage();
    await withDbUsage(inbox, () => listReminders(principalOf(statsAccount, solo.userId), undefined));
    expect(inbox.commands.sort()).toEqual(["GetItem", "Query"]);
  });
});

describe("activity", () => {
  it("40 events per page, newest version first, names of changed fields only", async () => {
    const task = await newTask(owner, { title: "Busy", description: "private words" });
    let version = 1;
    for (let i = 0; i < 44; i++) {
      const response = await patchTask(owner, task.id, i % 2 === 0 ? { version, description: `private ${i}` } : { version, title: `Busy ${i}` });
      expect(response.status).toBe(200);
      version = response.body.version;
    }
    expect(version).toBe(45);
    const first = await owner.get(`/tasks/${task.id}/activity`);
    expect(first.status).toBe(200);
    expectNoStore(first);
    expect(Object.keys(first.body)).toEqual(["object", "data", "next_before_version"]);
    expect(first.body.data).toHaveLength(40);
    expect(first.body.data.map((e: { version: number }) => e.version)).toEqual(Array.from({ length: 40 }, (_, i) => 45 - i));
    expect(Object.keys(first.body.data[0])).toEqual(["object", "version", "action", "actor", "timestamp", "changed_fields"]);
    expect(first.body.data[0]).toMatchObject({ object: "task_activity", action: "updated", actor: account.ownerUserId, changed_fields: ["title"] });
    expect(first.body.data[1].changed_fields).toEqual(["description"]);
    expect(first.text).not.toContain("private");
    expect(first.body.next_before_version).toBe(6);
    const second = await owner.get(`/tasks/${task.id}/activity`, { before_version: 6 });
    expect(second.body.data.map((e: { version: number }) => e.version)).toEqual([5, 4, 3, 2, 1]);
    expect(second.body.data[4]).toMatchObject({ action: "created", changed_fields: ["title", "assignee", "time_zone", "description"] });
    expect(second.body.next_before_version).toBeNull();
    expectError(await owner.get(`/tasks/${task.id}/activity`, { before_version: "0" }), 422, "invalid_query_parameter", "before_version");
    expectError(await owner.get(`/tasks/${randomUUID()}/activity`), 404, "resource_missing");
  });
});

describe("assignees", () => {
  it("active users of the account by name; without tasks.assign only the caller's own entry", async () => {
    const team = await newAccount();
    const assigner = await taskUser(team, { permissions: ["tasks.assign"], name: "Zed Assigner" });
    const plain = await taskUser(team, { name: "Amy Plain" });
    const gone = await taskUser(team, { name: "Gone User" });
    await updateUser(gone.userId, { status: "inactive" });
    const full = await api().withKey(assigner.key).get("/tasks/assignees");
    expect(full.status).toBe(200);
    expectNoStore(full);
    expect(full.body.object).toBe("task_assignees");
    expect(Object.entries(full.body.data)).toEqual([
      [plain.userId, "Amy Plain"],
      [team.ownerUserId, "Owner"],
      [assigner.userId, "Zed Assigner"],
    ]);
    expect((await api().withKey(plain.key).get("/tasks/assignees")).body.data).toEqual({ [plain.userId]: "Amy Plain" });
    expect(Object.keys((await api().withKey(team.ownerKey).get("/tasks/assignees")).body.data)).toHaveLength(3);
  });
});

describe("reconcile", () => {
  it("returns current accessible tasks (also when versions match) and the ids no longer accessible", async () => {
    const staff = await taskUser(account);
    const client = api().withKey(staff.key);
    const kept = await newTask(client, { title: "kept" });
    const changed = await newTask(client, { title: "changed" });
    await patchTask(client, changed.id, { version: 1, title: "changed twice" });
    const movedAway = await newTask(owner, { title: "was staff's", assignee_user_id: staff.userId });
    await patchTask(owner, movedAway.id, { version: 1, assignee_user_id: account.ownerUserId });
    const other = await newAccount();
    const foreign = await newTask(api().withKey(other.ownerKey), { title: "foreign" });
    const missing = randomUUID();
    const response = await client.post("/tasks/reconcile", {
      known: [
        { id: kept.id, version: 1 },
        { id: missing, version: 1 },
        { id: changed.id, version: 1 },
        { id: movedAway.id, version: 1 },
        { id: foreign.id.toUpperCase(), version: 1 },
      ],
    });
    expect(response.status).toBe(200);
    expectNoStore(response);
    expect(Object.keys(response.body)).toEqual(["data", "removed_ids"]);
    expect(response.body.data.map((t: { id: string; version: number }) => [t.id, t.version])).toEqual([
      [kept.id, 1],
      [changed.id, 2],
    ]);
    expect(Object.keys(response.body.data[0])).toEqual(TASK_KEYS);
    expect(response.body.removed_ids).toEqual([missing, movedAway.id, foreign.id]);
    expect(response.text).not.toContain("foreign");
  });

  it("at most 100 unique entries; no Idempotency-Key needed", async () => {
    const many = Array.from({ length: 101 }, () => ({ id: randomUUID(), version: 1 }));
    expectValidation(await owner.post("/tasks/reconcile", { known: many }), "known", "too_many");
    const id = randomUUID();
    expectValidation(
      await owner.post("/tasks/reconcile", {
        known: [
          { id, version: 1 },
          { id, version: 2 },
        ],
      }),
      "known[1].id",
      "duplicate",
    );
    expectValidation(await owner.post("/tasks/reconcile", { known: [{ id, version: 0 }] }), "known[0].version");
    expectValidation(await owner.post("/tasks/reconcile", {}), "known", "required");
    const hundred = await owner.post("/tasks/reconcile", { known: many.slice(0, 100) });
    expect(hundred.body).toEqual({ data: [], removed_ids: many.slice(0, 100).map((k) => k.id) });
  });
});
