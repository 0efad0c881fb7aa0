import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuildOptions } from "esbuild";

/**
 * How every Lambda handler is bundled: ONE set of esbuild options, used by the CDK stack
 * (`NodejsFunction` bundling, infra/stack.ts) and by `npm run bench:bundles`
 * (scripts/bench/bundles.ts), so the measured bundles are the deployed ones.
 *
 * - one self-contained ESM file per function, `platform: node`, `target: node22`, minified
 *   and tree-shaken, with the AWS SDK inside (nothing external: one file imports faster than
 *   resolving the runtime's SDK, and pins the SDK version the tests ran against);
 * - `mainFields: module, main`: packages' ESM builds, which tree-shake;
 * - no source maps (`--enable-source-maps` slows every cold start; the request log line
 *   carries the request id);
 * - a `require` for the CommonJS packages inside the ESM bundle (ElectroDB).
 */
export const BUNDLE_BANNER = "import{createRequire}from'module';const require=createRequire(import.meta.url);";

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

export const ESBUILD_OPTIONS = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  minify: true,
  treeShaking: true,
  sourcemap: false,
  mainFields: ["module", "main"],
  banner: { js: BUNDLE_BANNER },
  external: [],
  alias: BUNDLE_ALIASES,
} as const satisfies BuildOptions;

/**
 * The shared options as esbuild's `build()` takes them (mutable arrays), for the scripts and
 * tests that bundle a function as the stack does; `extra` adds the entry and output.
 */
export function esbuildOptions<Extra extends BuildOptions>(extra: Extra) {
  return { ...ESBUILD_OPTIONS, mainFields: [...ESBUILD_OPTIONS.mainFields], external: [...ESBUILD_OPTIONS.external] as string[], ...extra };
}

/** A file a function needs beside its bundle (read at run time, never imported). */
export interface BundleAsset {
  /** Absolute path of the source file. */
  from: string;
  /** File name in the function's package, next to `index.mjs`. */
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
