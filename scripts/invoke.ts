import { readFileSync } from "node:fs";
import { findRouteByKey } from "../lib/routes/index.js";
import { applyLocalEnvironment } from "./local/env.js";

/**
 * `npm run invoke -- events/<name>.json [--key isk_live_...]`: runs the Lambda handler that
 * AWS would run for this event, against DYNAMODB_ENDPOINT (default: the local stack's
 * DynamoDB on DYNAMODB_PORT), and prints its result.
 */
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error("usage: npm run invoke -- events/<name>.json [--key API_KEY]");
  process.exit(2);
}
const keyIndex = rest.indexOf("--key");
const apiKey = keyIndex >= 0 ? rest[keyIndex + 1] : undefined;
applyLocalEnvironment(process.env.DYNAMODB_ENDPOINT ?? `http://127.0.0.1:${process.env.DYNAMODB_PORT ?? "8000"}`);
const event = JSON.parse(readFileSync(file, "utf8"));
let module: string;
if (Array.isArray(event.Records)) module = "stream-processor";
else {
  if (apiKey) event.headers.authorization = `Bearer ${apiKey}`;
  module = findRouteByKey(event.routeKey)?.group ?? "platform";
}
const { handler } = await import(`../functions/${module}/handler.ts`);
const result = await handler(event, { awsRequestId: "local-invoke", getRemainingTimeInMillis: () => 30_000 });
console.log(JSON.stringify(result, null, 2));
