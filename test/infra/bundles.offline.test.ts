import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { bundleFileName, esbuildOptions } from "../../infra/bundling.js";
import { scaled } from "../support/timeouts.js";

/**
 * Each function's bundle (the deployed esbuild options) holds only its own group: its route
 * file and schemas, never the whole route table (lib/routes/index.ts), the OpenAPI generator
 * or another group's routes; the public platform function holds no database code.
 */
const groups = readdirSync("functions").sort();
const inputs = new Map<string, string[]>();

beforeAll(async () => {
  await Promise.all(
    groups.map(async (group) => {
      const result = await build(
        esbuildOptions({
          entryPoints: [`functions/${group}/handler.ts`],
          outfile: `${group}/${bundleFileName()}`,
          write: false,
          metafile: true,
          logLevel: "error",
        }),
      );
      inputs.set(group, Object.keys(result.metafile.inputs));
    }),
  );
}, scaled(120_000));

describe("offline: what each bundle holds", () => {
  it.each(groups.filter((g) => g !== "platform"))("%s: only its own routes, no route table, no OpenAPI generator", (group) => {
    const files = inputs.get(group)!;
    expect(files.filter((f) => f === "lib/routes/index.ts" || f.startsWith("lib/openapi/"))).toEqual([]);
    const routeFiles = files.filter((f) => f.startsWith("lib/routes/") && f !== "lib/routes/define.ts");
    expect(
      routeFiles.every((f) => f === `lib/routes/${group}.ts`),
      routeFiles.join(", "),
    ).toBe(true);
  });

  it("platform: no ElectroDB, no AWS SDK, no database code", () => {
    const files = inputs.get("platform")!;
    expect(files.filter((f) => /node_modules\/(electrodb|@aws-sdk|@smithy)\//.test(f) || (f.startsWith("lib/db/") && f !== "lib/db/metrics.ts"))).toEqual([]);
  });
});

describe("offline: the bundles' stand-ins (infra/shims)", () => {
  it("every database bundle carries the stand-ins, not jsonschema, the SDK's default credential chain or all of lib-dynamodb", () => {
    for (const group of groups.filter((g) => g !== "platform")) {
      const files = inputs.get(group)!;
      expect(
        files.some((f) => f.includes("node_modules/jsonschema/")),
        group,
      ).toBe(false);
      expect(
        files.some((f) => f.includes("credential-provider-node/")),
        group,
      ).toBe(false);
      expect(
        files.some((f) => f.includes("credential-provider-sso/")),
        group,
      ).toBe(false);
      expect(files).toContain("infra/shims/jsonschema.cjs");
      expect(files).toContain("infra/shims/lib-dynamodb.mjs");
    }
  });

  it(
    "a bundled ElectroDB Service still builds from its entities and works out transactions, with credentials from the environment",
    async () => {
      const source = `
      import { Entity, Service } from "electrodb";
      import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
      const model = (entity) => ({
        model: { entity, version: "1", service: "shim" },
        attributes: { id: { type: "string", required: true }, n: { type: "number" } },
        indexes: { primary: { pk: { field: "pk", composite: ["id"] }, sk: { field: "sk", composite: [] } } },
      });
      const client = new DynamoDBClient({ region: "us-east-1" });
      const service = new Service({ a: new Entity(model("a")), b: new Entity(model("b")) }, { table: "t", client });
      const params = service.transaction.write(({ a, b }) => [a.create({ id: "1" }).commit(), b.patch({ id: "2" }).add({ n: 1 }).commit()]).params();
      client.config.credentials().then((credentials) => console.log(JSON.stringify({ items: params.TransactItems.length, key: credentials.accessKeyId })));
    `;
      const result = await build(
        esbuildOptions({
          stdin: { contents: source, resolveDir: process.cwd(), sourcefile: "shim-check.mjs", loader: "js" },
          write: false,
          logLevel: "error",
        }),
      );
      const { mkdtempSync, writeFileSync } = await import("node:fs");
      const { tmpdir } = await import("node:os");
      const { execFileSync } = await import("node:child_process");
      const file = `${mkdtempSync(`${tmpdir()}/shim-`)}/${bundleFileName()}`;
      writeFileSync(file, result.outputFiles[0]!.text);
      const out = execFileSync("node", [file], { env: { PATH: process.env.PATH, AWS_ACCESS_KEY_ID: "AKIDSHIM", AWS_SECRET_ACCESS_KEY: "secret" } });
      expect(JSON.parse(String(out))).toEqual({ items: 2, key: "AKIDSHIM" });
    },
    scaled(60_000),
  );

  it(
    "a deployed function without TABLE_NAME fails as it starts, saying so",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "bundle-"));
      try {
        const file = join(dir, bundleFileName());
        await build(esbuildOptions({ entryPoints: ["functions/locations/handler.ts"], outfile: file, logLevel: "error" }));
        const { TABLE_NAME: _table, ...env } = process.env;
        // The message alone: node's own report of an uncaught error prints the (minified, very
        // long) source line first, which can outgrow the captured output.
        const load = `try { require(${JSON.stringify(file)}) } catch (error) { console.error(String(error && error.message)); process.exit(1) }`;
        const started = spawnSync(process.execPath, ["-e", load], {
          env: { ...env, AWS_LAMBDA_FUNCTION_NAME: "inventory-locations" },
          encoding: "utf8",
        });
        expect(started.status).not.toBe(0);
        expect(started.stderr).toContain("TABLE_NAME is not set on function inventory-locations");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    scaled(60_000),
  );
});
