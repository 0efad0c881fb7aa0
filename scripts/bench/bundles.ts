import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { bundleAssets, esbuildOptions } from "../../infra/bundling.js";

/**
 * `npm run bench:bundles`: bundles every Lambda handler (functions/<group>/handler.ts) with
 * THE esbuild options the CDK stack uses (infra/bundling.ts), then measures each bundle's size
 * and its cold import: `await import(bundle)` in a fresh `node` process, median of RUNS runs
 * (wall time; the process's CPU time beside it, which a busy machine inflates less). Prints
 * a table, and the biggest packages in each bundle.
 *
 * Beside the functions it measures the STACK FLOOR: a bundle of only the libraries every
 * database function loads (ElectroDB, the DynamoDB clients, zod, middy), none of the project's
 * code, built the same way. No function can import faster than it; what a function adds over
 * it is the project's own cost.
 *
 * Options: `RUNS=15` (default 9), `BUDGET_MS=90` (the cold import budget; a bundle over it is
 * marked), `--json` (one JSON object instead of the table), `--packages` (per-package sizes).
 */
const RUNS = Number.parseInt(process.env.RUNS ?? "9", 10);
const BUDGET_MS = Number.parseFloat(process.env.BUDGET_MS ?? "90");
const root = process.cwd();

export interface BundleFigures {
  group: string;
  bytes: number;
  importMs: number;
  cpuMs: number;
  minMs: number;
  /** Bytes in the bundle by package (node_modules) or folder (project code). */
  packages: Record<string, number>;
}

function packagesOf(metafile: Metafile): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const output of Object.values(metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const key = path.includes("node_modules/") ? path.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, "$1") : path.replace(/\/[^/]+$/, "/");
      sizes[key] = (sizes[key] ?? 0) + bytesInOutput;
    }
  }
  return sizes;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Cold import of one bundle: fresh processes, the same environment a Lambda has (no DynamoDB is contacted). */
function measure(bundle: string): { wall: number[]; cpu: number[] } {
  const wall: number[] = [];
  const cpu: number[] = [];
  const script = `const c=process.cpuUsage();const t=performance.now();await import(${JSON.stringify(bundle)});const w=performance.now()-t;const u=process.cpuUsage(c);console.log(JSON.stringify([w,(u.user+u.system)/1000]))`;
  for (let i = 0; i < RUNS; i++) {
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, TABLE_NAME: "bench", AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "bench", AWS_SECRET_ACCESS_KEY: "bench", NODE_OPTIONS: "" },
    });
    if (result.status !== 0) throw new Error(`importing ${bundle} failed: ${result.stderr}`);
    const [w, c] = JSON.parse(result.stdout.trim().split("\n").pop()!) as [number, number];
    wall.push(w);
    cpu.push(c);
  }
  return { wall, cpu };
}

/** The name of the stack-floor row. */
export const STACK_FLOOR = "(stack floor)";

/** The libraries every database function loads, used so that none is tree-shaken away. */
const STACK_FLOOR_SOURCE = `
  import { Entity, Service, createWriteTransaction } from "electrodb";
  import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
  import { DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
  import * as z from "zod";
  import middy from "@middy/core";
  export const libraries = [Entity, Service, createWriteTransaction, DynamoDBClient, DynamoDBDocumentClient, QueryCommand, z.object({ id: z.uuid() }), middy];
`;

export async function benchBundles(groups = readdirSync(join(root, "functions")).sort()): Promise<BundleFigures[]> {
  const out = mkdtempSync(join(tmpdir(), "bundles-"));
  const figures: BundleFigures[] = [];
  try {
    for (const group of [...groups, STACK_FLOOR]) {
      const dir = join(out, group === STACK_FLOOR ? "stack-floor" : group);
      mkdirSync(dir, { recursive: true });
      const entry =
        group === STACK_FLOOR
          ? { stdin: { contents: STACK_FLOOR_SOURCE, resolveDir: root, sourcefile: "stack-floor.mjs", loader: "js" as const } }
          : { entryPoints: [join(root, "functions", group, "handler.ts")] };
      const result = await build(
        esbuildOptions({
          ...entry,
          outfile: join(dir, "index.mjs"),
          metafile: true,
          logLevel: "error",
        }),
      );
      if (group !== STACK_FLOOR) for (const asset of bundleAssets(group)) copyFileSync(asset.from, join(dir, asset.to));
      const bundle = join(dir, "index.mjs");
      const { wall, cpu } = measure(bundle);
      figures.push({ group, bytes: statSync(bundle).size, importMs: median(wall), cpuMs: median(cpu), minMs: Math.min(...wall), packages: packagesOf(result.metafile) });
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return figures;
}

async function main(): Promise<void> {
  const figures = await benchBundles();
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify({ runs: RUNS, budgetMs: BUDGET_MS, bundles: figures })}\n`);
    return;
  }
  process.stdout.write(`Bundled handlers (infra/bundling.ts options): size and cold import, median of ${RUNS} fresh node processes\n`);
  const floor = figures.find((f) => f.group === STACK_FLOOR)!;
  process.stdout.write("| function | bundle KB | import ms (wall) | import ms (CPU) | fastest ms | over the stack floor ms | budget |\n|---|---|---|---|---|---|---|\n");
  for (const f of figures) {
    const over = f.group === STACK_FLOOR || f.group === "platform" ? "-" : (f.importMs - floor.importMs).toFixed(1);
    process.stdout.write(
      `| ${f.group} | ${(f.bytes / 1024).toFixed(0)} | ${f.importMs.toFixed(1)} | ${f.cpuMs.toFixed(1)} | ${f.minMs.toFixed(1)} | ${over} | ${f.importMs <= BUDGET_MS ? "ok" : `over ${BUDGET_MS} ms`} |\n`,
    );
  }
  process.stdout.write(`\n${STACK_FLOOR}: ElectroDB, @aws-sdk/client-dynamodb, @aws-sdk/lib-dynamodb, zod and middy with none of the project's code (the platform function loads no database library).\n`);
  if (process.argv.includes("--packages")) {
    for (const f of figures) {
      const top = Object.entries(f.packages)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(0)} KB`);
      process.stdout.write(`\n${f.group}: ${top.join(", ")}\n`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
