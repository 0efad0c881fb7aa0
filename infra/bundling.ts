import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuildOptions } from "esbuild";

/**
 * How every Lambda handler is bundled: ONE set of esbuild options, used by the CDK stack
 * (`NodejsFunction` bundling, infra/stack.ts) and by `npm run bench:bundles`
 * (scripts/bench/bundles.ts), so the measured bundles are the deployed ones.
 *
 * - one self-contained file per function in `BUNDLE_FORMAT`, `platform: node`,
 *   `target: node22`, minified and tree-shaken, with the AWS SDK inside (nothing external: one
 *   file imports faster than resolving the runtime's SDK, and pins the SDK version the tests
 *   ran against);
 * - `mainFields: module, main`: packages' ESM builds, which tree-shake;
 * - no source maps (`--enable-source-maps` slows every cold start; the request log line
 *   carries the request id);
 * - an ES module bundle gets a `require` for the CommonJS packages inside it (ElectroDB); a
 *   CommonJS bundle gets `import.meta.url` (lib/openapi/reference.ts finds the Redoc script
 *   beside the bundle with it).
 */
export type BundleFormat = "esm" | "cjs";

/**
 * The format of the deployed bundles: CommonJS, which the Lambda runtime loads with `require`.
 * Measured with `npm run bench:bundles -- --compare-formats` (each bundle built both ways,
 * imports interleaved, paired per round): the CommonJS import of a bundle costs about 0.9x the
 * CPU time of the same bundle as an ES module (0.84-0.99 per function, the stack floor 0.93).
 */
export const BUNDLE_FORMAT: BundleFormat = "cjs";

export const BUNDLE_BANNER = "import{createRequire}from'module';const require=createRequire(import.meta.url);";
/** The CommonJS bundle's stand-in for `import.meta.url` (esbuild leaves `import.meta` empty in CommonJS). */
export const CJS_BANNER = "const __bundle_import_meta_url=require('url').pathToFileURL(__filename).href;";
const CJS_DEFINE = { "import.meta.url": "__bundle_import_meta_url" };

const shims = fileURLToPath(new URL("./shims/", import.meta.url));

/**
 * Packages replaced in the bundles by lighter stand-ins (see each file under infra/shims/):
 * ElectroDB's model validation (the models are validated by the test suite), the AWS SDK's
 * default credential chain (Lambda provides credentials in the environment) and the part of
 * `@aws-sdk/lib-dynamodb` nothing uses (ElectroDB's `require` of it would keep all of it).
 */
export const BUNDLE_ALIASES: Record<string, string> = {
  jsonschema: join(shims, "jsonschema.cjs"),
  "@aws-sdk/credential-provider-node": join(shims, "credential-provider-node.mjs"),
  "@aws-sdk/lib-dynamodb": join(shims, "lib-dynamodb.mjs"),
};

const COMMON_OPTIONS = {
  bundle: true,
  platform: "node",
  target: "node22",
  minify: true,
  treeShaking: true,
  sourcemap: false,
  mainFields: ["module", "main"],
  external: [],
  alias: BUNDLE_ALIASES,
} as const satisfies BuildOptions;

/** The options of one format (the stack's is `ESBUILD_OPTIONS`; the bench compares both). */
export function formatOptions(format: BundleFormat) {
  return format === "esm"
    ? { ...COMMON_OPTIONS, format, banner: { js: BUNDLE_BANNER }, define: {} as Record<string, string> }
    : { ...COMMON_OPTIONS, format, banner: { js: CJS_BANNER }, define: { ...CJS_DEFINE } as Record<string, string> };
}

export const ESBUILD_OPTIONS = formatOptions(BUNDLE_FORMAT);

/** The bundle's file name in a function's package (what CDK names it, and the Lambda runtime loads). */
export const bundleFileName = (format: BundleFormat = BUNDLE_FORMAT): string => (format === "esm" ? "index.mjs" : "index.js");

/**
 * The shared options as esbuild's `build()` takes them (mutable arrays), for the scripts and
 * tests that bundle a function as the stack does; `extra` adds the entry and output.
 */
export function esbuildOptions<Extra extends BuildOptions>(extra: Extra, format: BundleFormat = BUNDLE_FORMAT) {
  const options = formatOptions(format);
  return { ...options, mainFields: [...options.mainFields], external: [...options.external] as string[], ...extra };
}

/** A file a function needs beside its bundle (read at run time, never imported). */
export interface BundleAsset {
  /** Absolute path of the source file. */
  from: string;
  /** File name in the function's package, next to the bundle. */
  to: string;
}

const require = createRequire(import.meta.url);

/**
 * Files copied next to a group's bundle. The platform function serves the HTML API reference
 * and the Redoc script from its own package (lib/openapi/reference.ts): nothing from a CDN.
 */
export function bundleAssets(group: string): BundleAsset[] {
  if (group !== "platform") return [];
  return [{ from: require.resolve("redoc/bundles/redoc.standalone.js"), to: "redoc.standalone.js" }];
}

/**
 * `NodejsFunction` bundling props from the shared options (CDK's names for the same esbuild
 * flags; the stack adds `format`, an enum there). `group` is the function's folder under
 * functions/ (its assets are copied after bundling).
 */
export function lambdaBundling(group: string) {
  const assets = bundleAssets(group);
  return {
    target: ESBUILD_OPTIONS.target,
    minify: ESBUILD_OPTIONS.minify,
    sourceMap: ESBUILD_OPTIONS.sourcemap,
    banner: ESBUILD_OPTIONS.banner.js,
    define: ESBUILD_OPTIONS.define,
    mainFields: [...ESBUILD_OPTIONS.mainFields],
    externalModules: [...ESBUILD_OPTIONS.external],
    esbuildArgs: Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([name, path]) => [`--alias:${name}`, path])),
    forceDockerBundling: false,
    commandHooks: {
      beforeBundling: (): string[] => [],
      beforeInstall: (): string[] => [],
      afterBundling: (_inputDir: string, outputDir: string): string[] =>
        assets.map((asset) => `cp ${JSON.stringify(asset.from)} ${JSON.stringify(`${outputDir}/${asset.to}`)}`),
    },
  };
}
