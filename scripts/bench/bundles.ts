import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { bundleAssets, bundleFileName, esbuildOptions, type BundleFormat, ESBUILD_OPTIONS } from "../../infra/bundling.js";

/**
 * `npm run bench:bundles`: bundles every Lambda handler (functions/<group>/handler.ts) with
 * THE esbuild options the CDK stack uses (infra/bundling.ts), then measures each bundle's size
 * and its cold import: the CPU time (`process.cpuUsage()`, user + system) of loading the bundle
 * in a fresh `node` process, the way the Lambda runtime loads it (`require` for a CommonJS
 * `index.js`, `import()` for an ES module `index.mjs`).
 *
 * Beside the functions it measures the STACK FLOOR: a bundle of only the libraries every
 * database function loads (ElectroDB, the DynamoDB clients, zod, middy), none of the project's
 * code, built the same way. No function can import faster than it; what a function adds over
 * it is the project's own cost.
 *
 * The measurement is interleaved: a ROUND imports every bundle once, each in its own fresh
 * process (in a shuffled order), and rounds repeat. A function's ratio to the floor is taken
 * within each round (both imports ran moments apart, under the same load), then the median of
 * those ratios is reported, so the machine drifting between rounds does not enter the figure.
 *
 * Options: `ROUNDS=25` (default 15), `MAX_RATIO=1.2` (default 1.15), `--check` (exit 1 when a
 * function's median ratio is over MAX_RATIO), `--json` (one JSON object instead of the table),
 * `--packages` (per-package sizes), `--format cjs|esm` (bundle in that format instead of the
 * stack's), `--compare-formats` (bundle in both and compare each bundle's CommonJS import
 * with its ES module import, paired per round: how the stack's format was chosen).
 */
const DEFAULT_ROUNDS = 15;
const DEFAULT_MAX_RATIO = 1.15;
const root = process.cwd();

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

/** One bundle on disk, ready to import. */
interface Bundle {
  group: string;
  format: BundleFormat;
  file: string;
  bytes: number;
  /** Bytes in the bundle by package (node_modules) or folder (project code). */
  packages: Record<string, number>;
}

export interface BundleFigures {
  group: string;
  format: BundleFormat;
  bytes: number;
  /** Median CPU ms of the cold import over the rounds. */
  cpuMs: number;
  /** Median over the rounds of (this import's CPU ms - the floor's, same round); 0 for the floor. */
  overFloorMs: number;
  /** Median over the rounds of (this import's CPU ms / the floor's, same round); 1 for the floor. */
  ratio: number;
  packages: Record<string, number>;
}

export interface ColdImportReport {
  format: BundleFormat;
  rounds: number;
  maxRatio: number;
  /** Every function, then the floor (last). */
  figures: BundleFigures[];
  /** Functions whose median ratio is over `maxRatio`. */
  over: string[];
  /** The per-function table (Markdown), with a line saying how it was measured. */
  table: string;
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Bundles one function (or the floor) as the stack does, in `format`, into its own folder under `out`. */
async function bundle(group: string, format: BundleFormat, out: string): Promise<Bundle> {
  const dir = join(out, `${group === STACK_FLOOR ? "stack-floor" : group}-${format}`);
  mkdirSync(dir, { recursive: true });
  const entry =
    group === STACK_FLOOR
      ? { stdin: { contents: STACK_FLOOR_SOURCE, resolveDir: root, sourcefile: "stack-floor.mjs", loader: "js" as const } }
      : { entryPoints: [join(root, "functions", group, "handler.ts")] };
  const file = join(dir, bundleFileName(format));
  const result = await build(esbuildOptions({ ...entry, outfile: file, metafile: true, logLevel: "error" }, format));
  if (group !== STACK_FLOOR) for (const asset of bundleAssets(group)) copyFileSync(asset.from, join(dir, asset.to));
  return { group, format, file, bytes: statSync(file).size, packages: packagesOf(result.metafile) };
}

/** The same environment a Lambda has (no DynamoDB is contacted at import). */
const IMPORT_ENV = {
  PATH: process.env.PATH,
  TABLE_NAME: "bench",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "bench",
  AWS_SECRET_ACCESS_KEY: "bench",
  NODE_OPTIONS: "",
};

/** CPU ms (user + system) of loading one bundle in a fresh process, as the Lambda runtime loads it. */
function importCpuMs(target: Bundle): number {
  const load = target.format === "cjs" ? `require(${JSON.stringify(target.file)})` : `await import(${JSON.stringify(`file://${target.file}`)})`;
  const script = `const c=process.cpuUsage();${load};const u=process.cpuUsage(c);console.log((u.user+u.system)/1000)`;
  const args = target.format === "cjs" ? ["-e", script] : ["--input-type=module", "-e", script];
  const result = spawnSync(process.execPath, args, { encoding: "utf8", env: IMPORT_ENV });
  if (result.status !== 0) throw new Error(`importing ${target.file} failed: ${result.stderr}`);
  return Number(result.stdout.trim().split("\n").pop());
}

function shuffled<T>(values: readonly T[]): T[] {
  const out = [...values];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** `rounds` rounds; in each, every bundle is imported once in a fresh process (shuffled order). CPU ms per bundle, one per round. */
function measureRounds(bundles: readonly Bundle[], rounds: number, progress?: (round: number) => void): Map<Bundle, number[]> {
  const samples = new Map<Bundle, number[]>(bundles.map((b) => [b, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of shuffled(bundles)) samples.get(target)!.push(importCpuMs(target));
    progress?.(round + 1);
  }
  return samples;
}

/** Median over the rounds of f(a's sample, b's sample) of the same round. */
const paired = (a: number[], b: number[], f: (x: number, y: number) => number) => median(a.map((x, i) => f(x, b[i]!)));

function functionGroups(): string[] {
  return readdirSync(join(root, "functions")).sort();
}

const progressToStderr = (rounds: number) => (round: number) => {
  if (process.stderr.isTTY) process.stderr.write(`\rround ${round}/${rounds}${round === rounds ? "\n" : ""}`);
};

/**
 * Bundles every function and the floor in `format` (default: the stack's), measures their cold
 * imports interleaved over `rounds` rounds, and returns the figures and the ratio table. The main
 * bench (scripts/bench/run.ts) prints its `table`.
 */
export async function coldImportReport(
  options: { groups?: string[]; rounds?: number; maxRatio?: number; format?: BundleFormat; progress?: (round: number) => void } = {},
): Promise<ColdImportReport> {
  const format = options.format ?? ESBUILD_OPTIONS.format;
  const rounds = options.rounds ?? DEFAULT_ROUNDS;
  const maxRatio = options.maxRatio ?? DEFAULT_MAX_RATIO;
  const out = mkdtempSync(join(tmpdir(), "bundles-"));
  try {
    const bundles: Bundle[] = [];
    for (const group of [...(options.groups ?? functionGroups()), STACK_FLOOR]) bundles.push(await bundle(group, format, out));
    const samples = measureRounds(bundles, rounds, options.progress);
    const floor = samples.get(bundles.at(-1)!)!;
    const figures = bundles.map((b): BundleFigures => {
      const cpu = samples.get(b)!;
      return {
        group: b.group,
        format,
        bytes: b.bytes,
        cpuMs: median(cpu),
        overFloorMs: paired(cpu, floor, (x, y) => x - y),
        ratio: paired(cpu, floor, (x, y) => x / y),
        packages: b.packages,
      };
    });
    const over = figures.filter((f) => f.group !== STACK_FLOOR && f.ratio > maxRatio).map((f) => f.group);
    return { format, rounds, maxRatio, figures, over, table: ratioTable(figures, { format, rounds, maxRatio }) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function ratioTable(figures: readonly BundleFigures[], { format, rounds, maxRatio }: { format: BundleFormat; rounds: number; maxRatio: number }): string {
  const lines = [
    `Cold import of each bundled handler (infra/bundling.ts, ${format === "cjs" ? "CommonJS, require()" : "ES module, import()"}): CPU time of the import in a fresh node process, ${rounds} interleaved rounds; ms over the floor and the ratio to it are paired within each round, then the median is taken`,
    "",
    `| function | bundle KB | import CPU ms | over the floor ms | ratio to the floor | within ${maxRatio}x |`,
    "|---|---|---|---|---|---|",
  ];
  for (const f of figures) {
    const floor = f.group === STACK_FLOOR;
    lines.push(
      `| ${f.group} | ${(f.bytes / 1024).toFixed(0)} | ${f.cpuMs.toFixed(1)} | ${floor ? "-" : f.overFloorMs.toFixed(1)} | ${floor ? "1" : f.ratio.toFixed(3)} | ${floor ? "-" : f.ratio <= maxRatio ? "yes" : "NO"} |`,
    );
  }
  lines.push(
    "",
    `${STACK_FLOOR}: ElectroDB, @aws-sdk/client-dynamodb, @aws-sdk/lib-dynamodb, zod and middy with none of the project's code, bundled the same way (the platform function loads no database library, so it imports under the floor).`,
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Each bundle built as CommonJS and as an ES module, all imported in every round: the CommonJS
 * import's CPU time over the ES module's, paired per round (below 1: CommonJS is faster).
 */
async function compareFormats(rounds: number): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), "bundle-formats-"));
  try {
    const groups = [...functionGroups(), STACK_FLOOR];
    const bundles: Bundle[] = [];
    for (const group of groups) for (const format of ["esm", "cjs"] as const) bundles.push(await bundle(group, format, out));
    const samples = measureRounds(bundles, rounds, progressToStderr(rounds));
    const of = (group: string, format: BundleFormat) => samples.get(bundles.find((b) => b.group === group && b.format === format)!)!;
    const esmFloor = of(STACK_FLOOR, "esm");
    const lines = [
      `CommonJS (require) vs ES module (import()) bundles: CPU time of the import, ${rounds} interleaved rounds, ratios paired per round`,
      "",
      "| bundle | ESM CPU ms | CJS CPU ms | CJS / ESM | ESM / ESM floor | CJS / ESM floor |",
      "|---|---|---|---|---|---|",
    ];
    for (const group of groups) {
      const esm = of(group, "esm");
      const cjs = of(group, "cjs");
      lines.push(
        `| ${group} | ${median(esm).toFixed(1)} | ${median(cjs).toFixed(1)} | ${paired(cjs, esm, (x, y) => x / y).toFixed(3)} | ${paired(esm, esmFloor, (x, y) => x / y).toFixed(3)} | ${paired(cjs, esmFloor, (x, y) => x / y).toFixed(3)} |`,
      );
    }
    return `${lines.join("\n")}\n`;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const rounds = Number.parseInt(process.env.ROUNDS ?? String(DEFAULT_ROUNDS), 10);
  const maxRatio = Number.parseFloat(process.env.MAX_RATIO ?? String(DEFAULT_MAX_RATIO));
  if (process.argv.includes("--compare-formats")) {
    process.stdout.write(await compareFormats(rounds));
    return;
  }
  const format = option("--format");
  if (format !== undefined && format !== "cjs" && format !== "esm") throw new Error(`--format must be cjs or esm, not ${format}`);
  const report = await coldImportReport({ rounds, maxRatio, format, progress: progressToStderr(rounds) });
  if (process.argv.includes("--json")) {
    const { table: _table, ...figures } = report;
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } else {
    process.stdout.write(report.table);
    if (process.argv.includes("--packages")) {
      for (const f of report.figures) {
        const top = Object.entries(f.packages)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 12)
          .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(0)} KB`);
        process.stdout.write(`\n${f.group}: ${top.join(", ")}\n`);
      }
    }
  }
  if (process.argv.includes("--check") && report.over.length > 0) {
    process.stderr.write(`cold import over ${report.maxRatio}x the stack floor: ${report.over.join(", ")}\n`);
    process.exitCode = 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
