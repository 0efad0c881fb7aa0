import { describe, expect, it } from "vitest";
import { matchRoute, methodsAtPath } from "../../lib/routes/index.js";

/** The local matcher picks routes the way API Gateway does: literal segments beat `{param}`. */
describe("offline: route matching", () => {
  const id = "3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e";

  it.each([
    ["GET", "/api/v3/tasks/stats", "getTaskStats"],
    ["GET", "/api/v3/tasks/assignees", "listTaskAssignees"],
    ["GET", "/api/v3/tasks/reminders", "listTaskReminders"],
    ["POST", "/api/v3/tasks/reconcile", "reconcileTasks"],
    ["GET", `/api/v3/tasks/${id}`, "getTask"],
    ["PATCH", `/api/v3/tasks/${id}`, "updateTask"],
    ["GET", `/api/v3/tasks/${id}/activity`, "listTaskActivity"],
    ["POST", `/api/v3/tasks/reminders/${id}/snooze`, "actOnTaskReminder"],
  ])("%s %s -> %s", (method, path, operationId) => {
    expect(matchRoute(method, path)?.route.operationId).toBe(operationId);
  });

  it("passes the path parameters", () => {
    expect(matchRoute("POST", `/api/v3/tasks/reminders/${id}/read`)?.pathParameters).toEqual({ id, operation: "read" });
    expect(matchRoute("GET", `/api/v3/tasks/${id}`)?.pathParameters).toEqual({ id });
  });

  it("only a route that says so (the HTML reference) also answers with a trailing slash", () => {
    expect(matchRoute("GET", "/api/v3/docs/")?.route.operationId).toBe("getApiReference");
    expect(matchRoute("GET", "/api/v3/docs")?.route.operationId).toBe("getApiReference");
    expect(matchRoute("GET", "/api/v3/locations/")).toBeUndefined();
    expect(matchRoute("GET", "/api/v3/docs//")).toBeUndefined();
  });

  it("a literal path serves only its own methods (API Gateway sends PATCH /tasks/stats to the {id} route; the pipeline answers 404 with the literal path's methods in Allow)", () => {
    expect(matchRoute("PATCH", "/api/v3/tasks/stats")?.route.operationId).toBe("updateTask");
    expect(methodsAtPath("/api/v3/tasks/stats")).toEqual(["GET"]);
    expect(methodsAtPath("/api/v3/estimates/preview")).toEqual(["POST"]);
  });
});
