import { createApiHandler } from "../../lib/http/api-handler.js";
import { taskRoutes } from "../../lib/routes/tasks.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import { createTask, getTask, updateTask } from "../../lib/domain/tasks/service.js";
import { listActivity, listAssignees, listTasks, reconcileTasks, taskStats, type TaskListQuery } from "../../lib/domain/tasks/lists.js";
import { actOnReminder, listReminders } from "../../lib/domain/tasks/reminders.js";
import type { ReminderOperation } from "../../lib/domain/tasks/rules.js";
import type { TaskRecordType } from "../../lib/domain/tasks/records.js";
import type { ReconcileBody, ReminderActionBody, TaskCreateBody, TaskUpdateBody } from "../../lib/schemas/tasks.js";

type TaskParams = { id: string };
type StatsQuery = { scope?: "mine" | "all" | "recovery"; record_type?: TaskRecordType; record_id?: string };

/** Endpoint group `tasks` (spec part 2, section 4.6). */
export const handler = createApiHandler(taskRoutes, {
  listTasks: async (req: ApiRequest<{}, TaskListQuery>) => ok(await listTasks(req.principal, req.query)),
  createTask: async (req: ApiRequest<{}, {}, TaskCreateBody>) => created(await createTask(req.principal, req.body, req.completion(201))),
  getTask: async (req: ApiRequest<TaskParams>) => ok(await getTask(req.principal, req.params.id)),
  updateTask: async (req: ApiRequest<TaskParams, {}, TaskUpdateBody>) => ok(await updateTask(req.principal, req.params.id, req.body, req.completion(200))),
  listTaskActivity: async (req: ApiRequest<TaskParams, { before_version?: string }>) =>
    ok(await listActivity(req.principal, req.params.id, req.query.before_version)),
  getTaskStats: async (req: ApiRequest<{}, StatsQuery>) => ok(await taskStats(req.principal, req.query)),
  listTaskAssignees: async (req: ApiRequest) => ok(await listAssignees(req.principal)),
  reconcileTasks: async (req: ApiRequest<{}, {}, ReconcileBody>) => ok(await reconcileTasks(req.principal, req.body)),
  listTaskReminders: async (req: ApiRequest<{}, { cursor?: string }>) => ok(await listReminders(req.principal, req.query.cursor)),
  actOnTaskReminder: async (req: ApiRequest<{ id: string; operation: ReminderOperation }, {}, ReminderActionBody>) =>
    ok(await actOnReminder(req.principal, req.params.id, req.params.operation, req.body, req.completion(200))),
});
