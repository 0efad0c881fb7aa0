import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceClock, currentTime, resetClock } from "../../lib/core/clock.js";
import { useApiServer, type ApiClient } from "../support/api.js";
import { expectError, expectValidation } from "../support/assertions.js";
import { newAccount, type TestAccount } from "../support/fixtures.js";
import { expectNoStore, newTask, patchTask, remind, taskUser, type TaskUser } from "../support/tasks.js";

/**
 * Reminders (spec part 2, sections 3.6 and 4.6; architecture section 8): scheduled ->
 * delivered when due (computed on read) -> read / dismissed / completed; snooze creates a new
 * generation; only the recipient acts; the inbox lists the caller's own delivered reminders,
 * newest first, and fetching marks nothing read.
 */
const api = useApiServer();

let account: TestAccount;
let owner: ApiClient;
let alice: TaskUser;
let client: ApiClient;

beforeAll(async () => {
  account = await newAccount();
  owner = api().withKey(account.ownerKey);
  alice = await taskUser(account);
  client = api().withKey(alice.key);
  await client.get("/tasks"); // loads the handler: later timings are not a cold start's
});

// The API runs in this process: reminders fall due by moving its clock, not by sleeping. The
// tests run one at a time: a clock moved by one must not overtake a reminder another just set.
afterAll(() => resetClock());

/** How far ahead a test's reminders are set before the clock is moved past them. */
const LEAD_MS = 60_000;

/** A reminder_at this many ms ahead. */
const soon = (ms: number) => new Date(currentTime().getTime() + ms).toISOString();

/** Tasks with reminders for `who`, each set a minute ahead; then the clock moves past them all. */
async function dueReminders(who: ApiClient, count: number, extra: Record<string, unknown> = {}): Promise<any[]> {
  const tasks = [];
  for (let i = 0; i < count; i++) tasks.push(await newTask(who, { title: `Remind ${i}`, due_date: "2030-06-01", ...extra, reminder_at: soon(LEAD_MS) }));
  advanceClock(LEAD_MS + 1);
  return tasks;
}

describe("delivery and the inbox", () => {
  it("a scheduled reminder is delivered by time; the inbox shows it; fetching marks nothing read", async () => {
    const who = api().withKey((await taskUser(account)).key);
    const task = await newTask(who, { title: "Ping me", due_date: "2030-06-01", due_time: "10:00", time_zone: "Europe/London", reminder_at: soon(LEAD_MS) });
    const at = task.reminder.scheduled_at as string;
    expect(Object.keys(task.reminder)).toEqual(["id", "generation", "status", "scheduled_at", "read_at"]);
    expect(task.reminder).toMatchObject({ generation: 1, status: "scheduled", scheduled_at: new Date(at).toISOString(), read_at: null });
    const later = await newTask(who, { title: "Later", reminder_at: soon(3_600_000) });
    const early = await who.get("/tasks/reminders");
    expectNoStore(early);
    expect(early.body).toEqual({ object: "list", data: [], unread_count: 0, next_cursor: null });
    advanceClock(Date.parse(at) - currentTime().getTime() + 1);
    const inbox = await who.get("/tasks/reminders");
    expect(Object.keys(inbox.body)).toEqual(["object", "data", "unread_count", "next_cursor"]);
    expect(inbox.body.unread_count).toBe(1); // not the later one: not delivered yet
    expect(inbox.body.data).toHaveLength(1);
    expect((await who.get(`/tasks/${later.id}`)).body.reminder.status).toBe("scheduled");
    const entry = inbox.body.data[0];
    expect(Object.keys(entry)).toEqual(["id", "object", "generation", "status", "scheduled_at", "read_at", "task"]);
    expect(entry).toEqual({
      id: task.reminder.id,
      object: "task_reminder",
      generation: 1,
      status: "delivered",
      scheduled_at: task.reminder.scheduled_at,
      read_at: null,
      task: {
        id: task.id,
        title: "Ping me",
        status: "open",
        version: 1,
        due_date: "2030-06-01",
        due_time: "10:00",
        due_at: "2030-06-01T09:00:00.000Z",
        time_zone: "Europe/London",
      },
    });
    expect((await who.get(`/tasks/${task.id}`)).body.reminder.status).toBe("delivered");
    const again = await who.get("/tasks/reminders");
    expect(again.body.unread_count).toBe(1);
    expect(again.body.data[0].status).toBe("delivered");
  });

  it("pages of at most 40, newest first, only the caller's own", async () => {
    const user = await taskUser(account);
    const who = api().withKey(user.key);
    const tasks = await dueReminders(who, 41);
    const other = await taskUser(account);
    await dueReminders(api().withKey(other.key), 1);
    const first = await who.get("/tasks/reminders");
    expect(first.body.data).toHaveLength(40);
    expect(first.body.unread_count).toBe(41);
    const keys = first.body.data.map((e: { scheduled_at: string; id: string }) => `${e.scheduled_at}#${e.id}`);
    expect([...keys].sort().reverse()).toEqual(keys);
    const second = await who.get("/tasks/reminders", { cursor: first.body.next_cursor });
    expect(second.body.data).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    expect(second.body.unread_count).toBe(41);
    const seen = [...first.body.data, ...second.body.data].map((e: { task: { id: string } }) => e.task.id).sort();
    expect(seen).toEqual(tasks.map((t) => t.id).sort());
    expectError(await api().withKey(other.key).get("/tasks/reminders", { cursor: first.body.next_cursor }), 400, "invalid_cursor");
    expectError(await who.get("/tasks/reminders", { cursor: "tc1.e30.x" }), 400, "invalid_cursor");
  });
});

describe("reminder operations", () => {
  it("read: delivered -> read (read_at), the task unchanged; reading again changes nothing", async () => {
    const [task] = await dueReminders(client, 1);
    const read = await remind(client, task.reminder.id, "read");
    expect(read.status, read.text).toBe(200);
    expectNoStore(read);
    expect(read.body).toMatchObject({ id: task.reminder.id, status: "read", generation: 1, task: { id: task.id, version: 1 } });
    expect(read.body.read_at).not.toBeNull();
    const stored = (await client.get(`/tasks/${task.id}`)).body;
    expect(stored).toMatchObject({ version: 1, modified: task.modified, reminder: { status: "read", read_at: read.body.read_at } });
    const inbox = (await client.get("/tasks/reminders")).body;
    expect(inbox.data.find((e: { id: string }) => e.id === task.reminder.id).status).toBe("read");
    const again = await remind(client, task.reminder.id, "read");
    expect(again.body.read_at).toBe(read.body.read_at);
    expect((await client.get(`/tasks/${task.id}/activity`)).body.data).toHaveLength(1);
  });

  it("unread_count is the caller's delivered reminders not yet read, dismissed or completed", async () => {
    const user = await taskUser(account);
    const who = api().withKey(user.key);
    const [a, b, c] = await dueReminders(who, 3);
    await newTask(who, { title: "later", reminder_at: soon(3_600_000) });
    expect((await who.get("/tasks/reminders")).body.unread_count).toBe(3);
    await remind(who, a.reminder.id, "read");
    expect((await who.get("/tasks/reminders")).body.unread_count).toBe(2);
    await remind(who, b.reminder.id, "dismiss");
    expect((await who.get("/tasks/reminders")).body.unread_count).toBe(1);
    await remind(who, c.reminder.id, "complete", { version: 1 });
    const inbox = (await who.get("/tasks/reminders")).body;
    expect(inbox.unread_count).toBe(0);
    expect(inbox.data.map((e: { id: string }) => e.id)).toEqual([a.reminder.id]); // dismissed and completed left the inbox
  });

  it("dismiss: the reminder leaves the inbox; the task is unchanged; reading or dismissing it again is 409; completing still completes the open task (spec 3.6), a snooze brings it back", async () => {
    const [task] = await dueReminders(client, 1);
    const dismissed = await remind(client, task.reminder.id, "dismiss");
    expect(dismissed.body).toMatchObject({ status: "dismissed", task: { version: 1 } });
    expect((await client.get(`/tasks/${task.id}`)).body).toMatchObject({ version: 1, reminder: { status: "dismissed" } });
    expect((await client.get("/tasks/reminders")).body.data.map((e: { id: string }) => e.id)).not.toContain(task.reminder.id);
    for (const operation of ["read", "dismiss"] as const) {
      const response = await remind(client, task.reminder.id, operation, {});
      expectError(response, 409, "reminder_not_actionable");
      expectNoStore(response);
    }
    // "open | reminder complete | completed" (spec 3.6), whatever became of the reminder.
    const completed = await remind(client, task.reminder.id, "complete", { version: 1 });
    expect(completed.status, completed.text).toBe(200);
    expect(completed.body).toMatchObject({ status: "completed", task: { version: 2, status: "completed" } });
    expectError(await remind(client, task.reminder.id, "complete", { version: 2 }), 409, "task_transition_not_allowed");
    // Snooze works in any state (spec 3.6): a new generation, scheduled.
    const snoozed = await remind(client, task.reminder.id, "snooze", { version: 2, minutes: 5 });
    expect(snoozed.status, snoozed.text).toBe(200);
    expect(snoozed.body).toMatchObject({ generation: 2, status: "scheduled", task: { version: 3, status: "completed" } });
  });

  it("snooze: needs the current version and 5/15/60/1440 minutes; a new generation, the due date kept", async () => {
    const [task] = await dueReminders(client, 1, { due_date: "2030-09-09", due_time: "08:15", time_zone: "UTC" });
    const id = task.reminder.id;
    expectValidation(await remind(client, id, "snooze", { minutes: 5 }), "version", "required");
    expectValidation(await remind(client, id, "snooze", { version: 1 }), "minutes", "required");
    const seven = await remind(client, id, "snooze", { version: 1, minutes: 7 });
    expectValidation(seven, "minutes");
    expect(seven.body.error.details[0].message).toBe("must be one of 5, 15, 60, 1440.");
    expectError(await remind(client, id, "snooze", { version: 2, minutes: 5 }), 409, "task_conflict", "version");
    const before = currentTime().getTime();
    const snoozed = await remind(client, id, "snooze", { version: 1, minutes: 15 });
    expect(snoozed.status, snoozed.text).toBe(200);
    expect(snoozed.body).toMatchObject({
      id,
      generation: 2,
      status: "scheduled",
      read_at: null,
      task: { version: 2, due_date: "2030-09-09", due_time: "08:15" },
    });
    const at = Date.parse(snoozed.body.scheduled_at);
    expect(at).toBeGreaterThanOrEqual(before + 15 * 60_000);
    expect(at).toBeLessThanOrEqual(currentTime().getTime() + 15 * 60_000);
    const stored = (await client.get(`/tasks/${task.id}`)).body;
    expect(stored).toMatchObject({
      version: 2,
      due_date: "2030-09-09",
      due_time: "08:15",
      due_at: task.due_at,
      reminder: { generation: 2, status: "scheduled" },
    });
    expect((await client.get("/tasks/reminders")).body.data.map((e: { id: string }) => e.id)).not.toContain(id); // not due any more
    const activity = (await client.get(`/tasks/${task.id}/activity`)).body.data[0];
    expect(activity).toMatchObject({ version: 2, action: "reminder_snoozed", changed_fields: ["reminder"] });
    // A not yet due reminder cannot be read, but can be snoozed again (another generation).
    expectError(await remind(client, id, "read"), 409, "reminder_not_actionable");
    expect((await remind(client, id, "snooze", { version: 2, minutes: 1440 })).body).toMatchObject({ generation: 3, task: { version: 3 } });
  });

  it("complete: needs the current version, completes the task and the reminder", async () => {
    const [task] = await dueReminders(client, 1);
    expectValidation(await remind(client, task.reminder.id, "complete", {}), "version", "required");
    expectValidation(await remind(client, task.reminder.id, "complete", { version: 1, minutes: 5 }), "minutes", "not_allowed");
    expectError(await remind(client, task.reminder.id, "complete", { version: 3 }), 409, "task_conflict");
    const done = await remind(client, task.reminder.id, "complete", { version: 1 });
    expect(done.body).toMatchObject({ status: "completed", task: { status: "completed", version: 2 } });
    const stored = (await client.get(`/tasks/${task.id}`)).body;
    expect(stored).toMatchObject({ status: "completed", version: 2, reminder: { status: "completed" } });
    expect(stored.completed_at).toBe(stored.modified);
    expect((await client.get(`/tasks/${task.id}/activity`)).body.data[0]).toMatchObject({ action: "completed", changed_fields: ["status", "reminder"] });
  });

  it("read and dismiss take {} only; every operation needs an Idempotency-Key; unknown operations are 404", async () => {
    const [task] = await dueReminders(client, 1);
    expectValidation(await remind(client, task.reminder.id, "read", { version: 1 }), "version", "not_allowed");
    expectValidation(await remind(client, task.reminder.id, "dismiss", { minutes: 5 }), "minutes", "not_allowed");
    expectValidation(await remind(client, task.reminder.id, "read", { extra: true }), "extra", "unknown_field");
    const noKey = await client.post(`/tasks/reminders/${task.reminder.id}/read`, {});
    expectError(noKey, 400, "idempotency_key_required");
    expectNoStore(noKey);
    expectError(await remind(client, task.reminder.id, "explode"), 404, "route_not_found");
    expectError(await remind(client, randomUUID(), "read"), 404, "resource_missing");
  });
});

describe("recipient, reassignment, closing and reopening", () => {
  it("only the recipient can act: anyone else, the owner included, gets 404", async () => {
    const [task] = await dueReminders(client, 1);
    const manager = await taskUser(account, { permissions: ["tasks.manage_all"] });
    for (const other of [owner, api().withKey(manager.key)]) {
      expectError(await remind(other, task.reminder.id, "read"), 404, "resource_missing");
      expectError(await remind(other, task.reminder.id, "complete", { version: 1 }), 404, "resource_missing");
      expect((await other.get("/tasks/reminders")).body.data.map((e: { id: string }) => e.id)).not.toContain(task.reminder.id);
    }
    expect((await owner.get(`/tasks/${task.id}`)).body.reminder.status).toBe("delivered"); // visible, not actionable
  });

  it("reassigning moves a live reminder to the new assignee (next generation, same time)", async () => {
    const bob = await taskUser(account);
    const assigner = await taskUser(account, { permissions: ["tasks.assign"] });
    const [task] = await dueReminders(api().withKey(assigner.key), 1, { assignee_user_id: alice.userId });
    await remind(client, task.reminder.id, "read");
    const moved = await patchTask(api().withKey(assigner.key), task.id, { version: 1, assignee_user_id: bob.userId });
    expect(moved.body.reminder).toMatchObject({
      id: task.reminder.id,
      generation: 2,
      status: "delivered",
      scheduled_at: task.reminder.scheduled_at,
      read_at: null,
    });
    expectError(await remind(client, task.reminder.id, "read"), 404, "resource_missing");
    expect((await client.get("/tasks/reminders")).body.data.map((e: { id: string }) => e.id)).not.toContain(task.reminder.id);
    const bobs = (await api().withKey(bob.key).get("/tasks/reminders")).body;
    expect(bobs.unread_count).toBe(1);
    expect(bobs.data[0]).toMatchObject({ id: task.reminder.id, generation: 2, status: "delivered" });
    expect((await remind(api().withKey(bob.key), task.reminder.id, "read")).status).toBe(200);
  });

  it("snooze works in any task state (spec 3.6): a completed or cancelled task's reminder gets a new generation, the task's status unchanged", async () => {
    const [done, dropped] = await dueReminders(client, 2);
    expect((await patchTask(client, done.id, { version: 1, status: "completed" })).body.reminder).toMatchObject({ generation: 1, status: "completed" });
    expect((await patchTask(client, dropped.id, { version: 1, status: "cancelled" })).body.reminder).toMatchObject({ generation: 1, status: "dismissed" });
    for (const [task, status] of [
      [done, "completed"],
      [dropped, "cancelled"],
    ] as const) {
      const before = Date.now();
      const snoozed = await remind(client, task.reminder.id, "snooze", { version: 2, minutes: 5 });
      expect(snoozed.status, snoozed.text).toBe(200);
      const after = (await client.get(`/tasks/${task.id}`)).body;
      expect(after).toMatchObject({
        status,
        version: 3,
        due_date: task.due_date,
        reminder: { id: task.reminder.id, generation: 2, status: "scheduled", read_at: null },
      });
      expect(Date.parse(after.reminder.scheduled_at)).toBeGreaterThanOrEqual(before + 5 * 60_000 - 1000);
    }
  });

  it("closing a task ends its reminder; a reopen does not restore it; a new reminder_at schedules the next generation", async () => {
    const [task] = await dueReminders(client, 1);
    const cancelled = await patchTask(client, task.id, { version: 1, status: "cancelled" });
    expect(cancelled.body.reminder).toMatchObject({ generation: 1, status: "dismissed" });
    expect((await client.get("/tasks/reminders")).body.data.map((e: { id: string }) => e.id)).not.toContain(task.reminder.id);
    const reopened = await patchTask(client, task.id, { version: 2, status: "open" });
    expect(reopened.body.reminder).toMatchObject({ generation: 1, status: "dismissed" });
    expectValidation(
      await patchTask(client, task.id, { version: 3, reminder_at: new Date(currentTime().getTime() - 1000).toISOString() }),
      "reminder_at",
      "not_in_future",
    );
    const at = soon(60_000);
    const rescheduled = await patchTask(client, task.id, { version: 3, reminder_at: at });
    expect(rescheduled.body.reminder).toMatchObject({ id: task.reminder.id, generation: 2, status: "scheduled", scheduled_at: new Date(at).toISOString() });
    const completed = await patchTask(client, task.id, { version: 4, status: "completed" });
    expect(completed.body.reminder.status).toBe("completed");
  });

  it("reminder_at null removes the reminder; its id is gone", async () => {
    const task = await newTask(client, { title: "remove me", reminder_at: soon(3_600_000) });
    const cleared = await patchTask(client, task.id, { version: 1, reminder_at: null });
    expect(cleared.body).toMatchObject({ version: 2, reminder: null });
    expectError(await remind(client, task.reminder.id, "dismiss"), 404, "resource_missing");
    expect((await client.get(`/tasks/${task.id}/activity`)).body.data[0].changed_fields).toEqual(["reminder"]);
  });

  it("parallel operations on one reminder: one snooze per version wins, no 5xx", async () => {
    const [task] = await dueReminders(client, 1);
    const responses = await Promise.all(Array.from({ length: 10 }, () => remind(client, task.reminder.id, "snooze", { version: 1, minutes: 5 })));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of responses.filter((r) => r.status !== 200)) expectError(r, 409, "task_conflict");
    const reads = await Promise.all(Array.from({ length: 10 }, () => remind(client, task.reminder.id, "dismiss")));
    expect(reads.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(reads.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    expect((await client.get(`/tasks/${task.id}`)).body).toMatchObject({ version: 2, reminder: { generation: 2, status: "dismissed" } });
  });
});
