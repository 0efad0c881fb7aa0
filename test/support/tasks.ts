import { expect } from "vitest";
import { createKey, createUser } from "../../lib/domain/admin/service.js";
import type { Permission, Principal } from "../../lib/auth/permissions.js";
import type { ApiClient, TestResponse } from "./api.js";
import { idempotencyKey, type TestAccount } from "./fixtures.js";

/** Helpers of the task suites. */
export const TASK_KEYS = [
  "id",
  "object",
  "title",
  "description",
  "status",
  "version",
  "time_zone",
  "due_date",
  "due_time",
  "due_at",
  "overdue_at",
  "created",
  "modified",
  "completed_at",
  "assignee",
  "reminder",
  "record",
  "available_actions",
];

export interface TaskUser {
  userId: string;
  key: string;
  name: string;
}

/** A staff user with these permissions (and optionally a time zone), plus a key (all scopes unless given). */
export async function taskUser(
  account: TestAccount,
  options: { permissions?: Permission[]; timeZone?: string; scopes?: string[]; name?: string; role?: "owner" | "staff" } = {},
): Promise<TaskUser> {
  const name = options.name ?? `User ${Math.random().toString(36).slice(2, 8)}`;
  const { user_id } = await createUser({
    accountId: account.accountId,
    name,
    role: options.role ?? "staff",
    permissions: options.permissions ?? [],
    timeZone: options.timeZone,
  });
  const { api_key } = await createKey({ userId: user_id, scopes: options.scopes ?? "all" });
  return { userId: user_id, key: api_key, name };
}

export function createTask(client: ApiClient, body: Record<string, unknown>): Promise<TestResponse> {
  return client.post("/tasks", body, { idempotencyKey: idempotencyKey() });
}

export async function newTask(client: ApiClient, body: Record<string, unknown>): Promise<any> {
  const response = await createTask(client, body);
  expect(response.status, response.text).toBe(201);
  return response.body;
}

export function patchTask(client: ApiClient, id: string, body: Record<string, unknown>): Promise<TestResponse> {
  return client.patch(`/tasks/${id}`, body, { idempotencyKey: idempotencyKey() });
}

export function remind(client: ApiClient, reminderId: string, operation: string, body: Record<string, unknown> = {}): Promise<TestResponse> {
  return client.post(`/tasks/reminders/${reminderId}/${operation}`, body, { idempotencyKey: idempotencyKey() });
}

export function expectNoStore(response: TestResponse): void {
  expect(response.headers.get("cache-control"), `${response.status} ${response.text}`).toBe("no-store");
}

/** A principal as authentication builds it, for calling the domain directly (DynamoDB call counts). */
export function principalOf(account: TestAccount, userId = account.ownerUserId, role: "owner" | "staff" = "owner"): Principal {
  return {
    accountId: account.accountId,
    userId,
    role,
    permissions: new Set(),
    assignedLocationId: null,
    timeZone: null,
    keyId: "test",
    keyHash: "test",
    scopes: null,
  };
}

/** Every page of a task list (following next_cursor). */
export async function allPages(client: ApiClient, path: string, query: Record<string, string | number> = {}): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const response = await client.get(path, { ...query, ...(cursor ? { cursor } : {}) });
    expect(response.status, response.text).toBe(200);
    items.push(...response.body.data);
    cursor = response.body.next_cursor ?? undefined;
    if (!cursor) return items;
  }
  throw new Error("too many pages");
}
