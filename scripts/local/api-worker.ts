import type { EndpointGroup } from "../../lib/routes/index.js";
import type { HttpEvent } from "../../lib/http/types.js";
import { invokeHandler } from "./handlers.js";

/**
 * One API worker process of the local stack (`API_PROCESSES` > 1): like a Lambda container it
 * serves ONE request at a time (the pool in `worker-pool.ts` sends it the next one only after
 * the answer), with the same handler modules, and shares nothing with the other workers but
 * DynamoDB. Requests come and answers go over the IPC channel of `child_process.fork`.
 */
interface Invocation {
  id: number;
  group: EndpointGroup;
  event: HttpEvent;
  requestId: string;
}

process.on("message", (message: Invocation) => {
  // Taken before anything runs: a request this worker never acknowledged ran nowhere, and the pool gives it to another.
  process.send?.({ accepted: message.id });
  invokeHandler(message.group, message.event, message.requestId).then(
    (result) => process.send?.({ id: message.id, result }),
    (error: unknown) => process.send?.({ id: message.id, error: (error as Error)?.stack ?? String(error) }),
  );
});

// The parent going away (Ctrl-C, a crash) ends the worker too.
process.on("disconnect", () => process.exit(0));
process.send?.({ ready: true });
