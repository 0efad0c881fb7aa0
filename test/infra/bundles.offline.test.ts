import { readdirSync } from "node:fs";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { ESBUILD_OPTIONS } from "../../infra/bundling.js";

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
      const result = await build({
        ...ESBUILD_OPTIONS,
        mainFields: [...ESBUILD_OPTIONS.mainFields],
        external: [...ESBUILD_OPTIONS.external],
        entryPoints: [`functions/${group}/handler.ts`],
        outfile: `${group}.mjs`,
        write: false,
        metafile: true,
        logLevel: "error",
      });
      inputs.set(group, Object.keys(result.metafile.inputs));
    }),
  );
}, 120_000);

describe("offline: what each bundle holds", () => {
  it.each(groups.filter((g) => g !== "platform"))("%s: only its own routes, no route table, no OpenAPI generator", (group) => {
    const files = inputs.get(group)!;
    expect(files.filter((f) => f === "lib/routes/index.ts" || f.startsWith("lib/openapi/"))).toEqual([]);
    const routeFiles = files.filter((f) => f.startsWith("lib/routes/") && f !== "lib/routes/define.ts");
    expect(routeFiles.every((f) => f === `lib/routes/${group}.ts`), routeFiles.join(", ")).toBe(true);
  });

  it("platform: no ElectroDB, no AWS SDK, no database code", () => {
    const files = inputs.get("platform")!;
    expect(files.filter((f) => /node_modules\/(electrodb|@aws-sdk|@smithy)\//.test(f) || (f.startsWith("lib/db/") && f !== "lib/db/metrics.ts"))).toEqual([]);
  });
});
