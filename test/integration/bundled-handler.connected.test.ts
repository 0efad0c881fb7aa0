import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleFileName, esbuildOptions } from "../../infra/bundling.js";
import { routesOfGroup, type EndpointGroup } from "../../lib/routes/index.js";
import { newAccount, type TestAccount } from "../support/fixtures.js";
import { scaled } from "../support/timeouts.js";

/**
 * The deployed artefact, not the sources: the locations function bundled with the stack's
 * esbuild options (infra/bundling.ts: its stand-ins for ElectroDB's model validation, the SDK's
 * credential chain and the unused part of lib-dynamodb included) runs in a fresh `node` process
 * against DynamoDB Local and serves writes (one transaction each, idempotency outcome stored),
 * a keyed replay, a collection read and a list. Entities are constructed on first use there, so
 * this is also the check that a cold function finds every entity its requests need. Then every
 * other database function's bundle answers its first list route the same way. `npm run
 * test:lambda-runtime` runs this file on the Lambda runtime's Node version (22).
 */
const run = promisify(execFile);
let dir: string;
let account: TestAccount;

/** Every function that serves API routes from the database (not the public platform one). */
const DATABASE_GROUPS = readdirSync("functions")
  .filter((group) => group !== "platform" && routesOfGroup(group as EndpointGroup).length > 0)
  .sort();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bundled-handler-"));
  await Promise.all(
    DATABASE_GROUPS.map((group) =>
      build(
        esbuildOptions({
          entryPoints: [`functions/${group}/handler.ts`],
          outfile: join(dir, group, bundleFileName()),
          logLevel: "error",
        }),
      ),
    ),
  );
  account = await newAccount();
}, scaled(120_000));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The steps, run in a fresh process by the bundle's own handler (each takes the results so far,
 * for ids the previous steps created). Written as JavaScript: it runs outside this test.
 */
const STEPS = `
const key = process.env.TEST_API_KEY;
const event = (routeKey, path, { body, idempotencyKey, pathParameters, query } = {}) => {
  const [method] = routeKey.split(" ");
  const headers = { accept: "application/json", authorization: "Bearer " + key };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  return {
    version: "2.0", routeKey, rawPath: path, rawQueryString: new URLSearchParams(query ?? {}).toString(), queryStringParameters: query, headers, pathParameters,
    body: body === undefined ? undefined : JSON.stringify(body), isBase64Encoded: false,
    requestContext: { accountId: "000000000000", apiId: "bundle", domainName: "127.0.0.1", domainPrefix: "bundle",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "bundle" },
      requestId: "bundle-" + Math.random(), routeKey, stage: "$default", time: new Date().toUTCString(), timeEpoch: Date.now() },
  };
};
const create = () => event("POST /api/v3/locations", "/api/v3/locations", { body: { name: "Bundled", short_name: "BND" }, idempotencyKey: "bundle-" + key.slice(-12) });
const locationId = (results) => JSON.parse(results[0].body).id;
export const steps = [
  () => create(),
  () => create(),
  (results) => event("POST /api/v3/locations/{location_id}/zones", "/api/v3/locations/" + locationId(results) + "/zones",
    { body: { name: "Aisle 1", short_name: "A1" }, idempotencyKey: "bundle-zone-" + key.slice(-12), pathParameters: { location_id: locationId(results) } }),
  (results) => event("GET /api/v3/locations/{location_id}/zones", "/api/v3/locations/" + locationId(results) + "/zones", { pathParameters: { location_id: locationId(results) } }),
  () => event("GET /api/v3/locations", "/api/v3/locations"),
];
`;

/** The first list route of a group, as one step (the same event builder as STEPS). */
const listStep = (group: string): string => {
  const route = routesOfGroup(group as EndpointGroup).find((r) => r.method === "GET" && !r.path.includes("{"))!;
  // The sync feed answers only a start, a since or a cursor.
  const query = group === "sync" ? { start: "now", resources: "invoice" } : undefined;
  return STEPS.replace(
    /export const steps = \[[\s\S]*$/,
    `export const steps = [() => event("GET ${route.path}", "${route.path}", { query: ${JSON.stringify(query)} })];\n`,
  );
};

/**
 * Runs a group's bundle (in `node`, the one running this suite: Node 22 under
 * `npm run test:lambda-runtime`) on each step in turn, in one fresh process; returns each result.
 */
async function invokeBundle(group = "locations", steps = STEPS): Promise<{ statusCode: number; headers: Record<string, string>; body: any }[]> {
  const groupDir = join(dir, group);
  writeFileSync(join(groupDir, "steps.mjs"), steps);
  const script = `const { handler } = await import("./${bundleFileName()}");
    const { steps } = await import("./steps.mjs");
    const results = [];
    for (const step of steps) results.push(await handler(step(results), { awsRequestId: "bundle-" + results.length, getRemainingTimeInMillis: () => 30000 }));
    process.stdout.write(JSON.stringify(results));`;
  writeFileSync(join(groupDir, "run.mjs"), script);
  const { stdout } = await run(process.execPath, [join(groupDir, "run.mjs")], {
    env: {
      PATH: process.env.PATH,
      TEST_API_KEY: account.ownerKey,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_NAME: process.env.TABLE_NAME,
      AWS_REGION: "local",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      LOG_LEVEL: "ERROR",
      RATE_LIMIT_PER_MINUTE: "100000",
    },
  });
  return (JSON.parse(stdout) as { statusCode: number; headers: Record<string, string>; body: string }[]).map((r) => ({
    ...r,
    body: r.body ? JSON.parse(r.body) : undefined,
  }));
}

describe("the bundled locations function against DynamoDB Local", () => {
  it(
    "creates a location and a zone, replays a keyed create, reads the zones and lists the locations",
    async () => {
      const [created, replayed, zone, zones, list] = await invokeBundle();
      expect(created!.statusCode).toBe(201);
      expect(created!.body).toMatchObject({ name: "Bundled", short_name: "BND" });
      expect(replayed!.statusCode, JSON.stringify(replayed)).toBe(201);
      expect(replayed!.headers["Idempotent-Replayed"] ?? replayed!.headers["idempotent-replayed"]).toBe("true");
      expect(replayed!.body).toEqual(created!.body);
      expect(zone!.statusCode).toBe(201);
      expect(zones!.statusCode).toBe(200);
      expect(zones!.body.data.map((z: { id: string }) => z.id)).toEqual([zone!.body.id]);
      expect(list!.statusCode).toBe(200);
      expect(list!.body.data.map((l: { id: string }) => l.id)).toEqual([created!.body.id]);
    },
    scaled(60_000),
  );
});

describe("every bundled database function against DynamoDB Local", () => {
  it.each(DATABASE_GROUPS)(
    "%s: its bundle answers its first list route",
    async (group) => {
      const [listed] = await invokeBundle(group, listStep(group));
      expect(listed!.statusCode, JSON.stringify(listed)).toBe(200);
      expect(listed!.headers["X-Request-Id"] ?? listed!.headers["x-request-id"]).toBeTruthy();
      if (group === "sync") expect(listed!.body.object).toBe("sync_start");
      else expect(Array.isArray(listed!.body.data), JSON.stringify(listed!.body)).toBe(true);
    },
    60_000,
  );
});
