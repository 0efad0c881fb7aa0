import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../lib/openapi/document.js";
import { routesOfGroup } from "../../lib/routes/index.js";

type Response = { headers?: Record<string, unknown> };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Response & { $ref?: string }> }>>;
  components: { schemas: Record<string, any>; responses: Record<string, Response> };
};

/** The tasks group in the OpenAPI document (spec part 2, section 4.6). */
describe("offline: tasks in the OpenAPI document", () => {
  const doc = buildOpenApiDocument() as unknown as Doc;
  const routes = routesOfGroup("tasks");

  it("every tasks route declares no-store, its errors and headers, and an example when it has a body", () => {
    expect(routes).toHaveLength(10);
    for (const route of routes) {
      expect(route.noStore, route.operationId).toBe(true);
      expect(route.headers, route.operationId).toContain("Cache-Control");
      if (route.request.body) expect(route.example?.body, route.operationId).toBeDefined();
    }
    const codes = routes.flatMap((r) => Object.values(r.errors ?? {}).flat());
    for (const code of ["task_conflict", "task_transition_not_allowed", "reminder_not_actionable", "invalid_cursor"]) expect(codes).toContain(code);
  });

  it("documents Cache-Control: no-store on every response of the group, errors included", () => {
    for (const route of routes) {
      const responses = doc.paths[route.path]![route.method.toLowerCase()]!.responses;
      for (const [status, entry] of Object.entries(responses)) {
        // A response several operations share is a component (components.responses).
        const response = entry.$ref ? doc.components.responses[entry.$ref.replace("#/components/responses/", "")]! : entry;
        expect(response.headers?.["Cache-Control"], `${route.operationId} ${status}`).toBeDefined();
      }
    }
  });

  it("names the inner shapes as components", () => {
    for (const name of [
      "Task",
      "TaskAssignee",
      "TaskReminder",
      "TaskRecordPreview",
      "TaskList",
      "TaskActivityList",
      "TaskStats",
      "TaskAssigneeMap",
      "TaskReconciliation",
      "TaskReminderEntry",
      "TaskReminderInbox",
      "TaskCreate",
      "TaskUpdate",
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(Object.keys(doc.components.schemas.Task.properties)).toEqual([
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
    ]);
    expect(Object.keys(doc.components.schemas.TaskAssignee.properties)).toEqual(["id", "name", "photo_url", "active"]);
    expect(Object.keys(doc.components.schemas.TaskReminder.properties)).toEqual(["id", "generation", "status", "scheduled_at", "read_at"]);
  });
});
