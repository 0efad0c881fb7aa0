import type { Context } from "aws-lambda";
import type { EndpointGroup } from "../../lib/routes/index.js";
import type { HttpEvent, HttpResult } from "../../lib/http/types.js";

/**
 * The Lambda handler modules the local stack invokes (the very ones AWS runs), loaded once per
 * process on first use, with a Lambda-like context (29 s deadline, as API Gateway's).
 */
type LambdaHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

const loaded = new Map<EndpointGroup, Promise<LambdaHandler>>();
function handlerOf(group: EndpointGroup): Promise<LambdaHandler> {
  let pending = loaded.get(group);
  if (!pending) {
    pending = import(`../../functions/${group}/handler.ts`).then((module: { handler: LambdaHandler }) => module.handler);
    loaded.set(group, pending);
  }
  return pending;
}

function lambdaContext(group: string, requestId: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${group}`,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${group}`,
    memoryLimitInMB: "1024",
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/local-${group}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Runs one request through the group's handler in this process. */
export async function invokeHandler(group: EndpointGroup, event: HttpEvent, requestId: string): Promise<HttpResult> {
  const handler = await handlerOf(group);
  return handler(event, lambdaContext(group, requestId));
}
