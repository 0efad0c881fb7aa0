import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROUTES, routeKey, type RouteDefinition } from "../lib/routes/index.js";

/**
 * Writes events/: one API Gateway HTTP API (payload 2.0) event per route of the route table,
 * plus a DynamoDB Streams event, for invoking a handler locally (`npm run invoke`).
 * `npm run events` regenerates them; a test checks that every route has its event.
 */
const SAMPLE_ID = "00000000-0000-4000-8000-000000000001";
const SAMPLE_ZONE = "00000000-0000-4000-8000-000000000002";

/** The sample body of a route: its documented example (every route with a body has one; a test checks it). */
export function sampleBody(operationId: string): unknown {
  return ROUTES.find((r) => r.operationId === operationId)?.example?.body;
}

function samplePath(route: RouteDefinition): { path: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    params[name] = name === "zone_id" ? SAMPLE_ZONE : name === "operation" ? "snooze" : SAMPLE_ID;
    return params[name]!;
  });
  return { path, params };
}

export function sampleEvent(route: RouteDefinition): Record<string, unknown> {
  const { path, params } = samplePath(route);
  const body = route.example?.body;
  const headers: Record<string, string> = { host: "127.0.0.1:3000", accept: "application/json" };
  if (route.authenticated) headers.authorization = "Bearer isk_live_REPLACE_WITH_YOUR_KEY_0000000000000000000000";
  if (body !== undefined) headers["content-type"] = "application/json";
  if (route.idempotency !== "none") headers["idempotency-key"] = `sample-${route.operationId}`;
  return {
    version: "2.0",
    routeKey: routeKey(route),
    rawPath: path,
    rawQueryString: "",
    headers,
    ...(Object.keys(params).length > 0 ? { pathParameters: params } : {}),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: "127.0.0.1",
      domainPrefix: "local",
      http: { method: route.method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "sample" },
      requestId: `sample-${route.operationId}`,
      routeKey: routeKey(route),
      stage: "$default",
      time: "21/Nov/2026:12:00:00 +0000",
      timeEpoch: 1795262400000,
    },
  };
}

export const streamSample = {
  Records: [
    {
      eventID: "1",
      eventName: "MODIFY",
      eventVersion: "1.1",
      eventSource: "aws:dynamodb",
      awsRegion: "us-east-1",
      dynamodb: {
        Keys: { pk: { S: `$inv#accountid_${SAMPLE_ID}#locationid_${SAMPLE_ID}` }, sk: { S: "$locationtree#location_1" } },
        NewImage: {
          pk: { S: `$inv#accountid_${SAMPLE_ID}#locationid_${SAMPLE_ID}` },
          sk: { S: "$locationtree#location_1" },
          __edb_e__: { S: "location" },
          __edb_v__: { S: "1" },
          name: { S: "Main Warehouse" },
        },
        SequenceNumber: "100000000000000000001",
        SizeBytes: 120,
        StreamViewType: "NEW_AND_OLD_IMAGES",
      },
      eventSourceARN: "arn:aws:dynamodb:us-east-1:000000000000:table/inventory/stream/2026-11-21T00:00:00.000",
    },
  ],
};

if (process.argv[1]?.endsWith("events.ts")) {
  const dir = join(process.cwd(), "events");
  mkdirSync(dir, { recursive: true });
  for (const route of ROUTES) {
    writeFileSync(join(dir, `${route.operationId}.json`), `${JSON.stringify(sampleEvent(route), null, 2)}\n`);
  }
  writeFileSync(join(dir, "stream-processor.json"), `${JSON.stringify(streamSample, null, 2)}\n`);
  console.log(`wrote ${ROUTES.length + 1} events to events/`);
}
