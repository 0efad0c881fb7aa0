import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleAssets, bundleFileName, esbuildOptions } from "../../infra/bundling.js";
import { scaled } from "../support/timeouts.js";

/**
 * The platform function's package is self-contained: bundled with the deployed options
 * (infra/bundling.ts) plus its assets into a folder outside the project (no node_modules to
 * fall back on), it serves the OpenAPI document, the HTML reference and the Redoc script, and
 * answers 404 with Allow for a known path with another method.
 */
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "platform-bundle-"));
  await build(
    esbuildOptions({
      entryPoints: ["functions/platform/handler.ts"],
      outfile: join(dir, bundleFileName()),
      logLevel: "error",
    }),
  );
  for (const asset of bundleAssets("platform")) copyFileSync(asset.from, join(dir, asset.to));
}, scaled(60_000));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the bundled handler in a fresh node process with a payload 2.0 event. */
function invoke(method: string, path: string, routeKey: string): { statusCode: number; headers: Record<string, string>; body: string } {
  const script = join(dir, "invoke.mjs");
  writeFileSync(
    script,
    `const { handler } = await import("./${bundleFileName()}");
const event = { version: "2.0", routeKey: ${JSON.stringify(routeKey)}, rawPath: ${JSON.stringify(path)}, rawQueryString: "", headers: {}, isBase64Encoded: false,
  requestContext: { http: { method: ${JSON.stringify(method)}, path: ${JSON.stringify(path)} }, requestId: "r-1", routeKey: ${JSON.stringify(routeKey)} } };
const result = await handler(event, { getRemainingTimeInMillis: () => 10000 });
console.log(JSON.stringify(result));`,
  );
  const run = spawnSync(process.execPath, [script], {
    cwd: dir,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { PATH: process.env.PATH, TABLE_NAME: "t", AWS_REGION: "us-east-1", LOG_LEVEL: "ERROR" },
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split("\n").pop()!);
}

describe("offline: the platform function's bundle", () => {
  it("holds the Redoc script beside the bundle", () => {
    expect(readdirSync(dir).sort()).toEqual([bundleFileName(), "redoc.standalone.js"].sort());
  });

  it("serves the OpenAPI document, the HTML reference and the renderer from its own package", () => {
    const openapi = invoke("GET", "/api/v3/openapi.json", "GET /api/v3/openapi.json");
    expect(openapi.statusCode).toBe(200);
    expect(JSON.parse(openapi.body).openapi).toBe("3.1.0");

    const page = invoke("GET", "/api/v3/docs", "GET /api/v3/docs");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<redoc spec-url="openapi.json"');

    // With a trailing slash, however API Gateway routes it (to the route, or to $default): the same page, its URLs one level down.
    for (const routeKey of ["GET /api/v3/docs", "$default"]) {
      const slashed = invoke("GET", "/api/v3/docs/", routeKey);
      expect(slashed.statusCode, routeKey).toBe(200);
      expect(slashed.body, routeKey).toContain('<redoc spec-url="../openapi.json"');
      expect(slashed.body, routeKey).toContain('<script src="redoc.standalone.js"></script>');
    }
    expect(page.headers["Content-Type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["Content-Security-Policy"]).toContain("default-src 'none'");

    const script = invoke("GET", "/api/v3/docs/redoc.standalone.js", "GET /api/v3/docs/redoc.standalone.js");
    expect(script.statusCode).toBe(200);
    expect(script.body.length).toBeGreaterThan(500_000);
    expect(script.body).not.toContain("cdn.redoc.ly");
  });

  it("answers $default: 404 route_not_found, with Allow for a known path", () => {
    const wrongMethod = invoke("DELETE", "/api/v3/items", "$default");
    expect(wrongMethod.statusCode).toBe(404);
    expect(wrongMethod.headers.Allow).toBe("GET, POST");
    expect(JSON.parse(wrongMethod.body).error.code).toBe("route_not_found");
    const unknown = invoke("GET", "/api/v3/nothing", "$default");
    expect(unknown.statusCode).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe("route_not_found");
  });
});
