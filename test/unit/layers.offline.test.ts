import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The shape of `lib/` (README, "Layout"; issue 20): imports point one way (routes and http ->
 * domain -> db -> core; schemas import no domain code), no module imports itself back through
 * others, no source file is over 450 lines, and every document kind's `model.ts` is pure: none
 * of its runtime imports reaches `lib/db` (type-only imports are erased at build).
 */
const LIB = resolve(import.meta.dirname, "../../lib");
const MAX_LINES = 450;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.includes(".test.") ? [path] : [];
  });
}

const RUNTIME_IMPORT = /^(?:import|export)\s+(?!type\s)(?:[^"';]*?\sfrom\s+)?["'](\.[^"']+)["']/gm;

/** The project files a module loads at run time (relative imports, `import type` left out). */
function runtimeImports(file: string, text: string): string[] {
  return [...text.matchAll(RUNTIME_IMPORT)].map((match) => resolve(dirname(file), match[1]!).replace(/\.js$/, ".ts"));
}

const files = sourceFiles(LIB);
const texts = new Map(files.map((file) => [file, readFileSync(file, "utf8")]));
const graph = new Map(files.map((file) => [file, runtimeImports(file, texts.get(file)!).filter((dep) => texts.has(dep))]));
const layerOf = (file: string) => relative(LIB, file).split("/")[0]!;
const name = (file: string) => relative(LIB, file);

/** Every module `file` loads, directly or not, with the chain that reaches it. */
function reachable(file: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const stack: [string, string[]][] = [[file, [file]]];
  while (stack.length > 0) {
    const [current, chain] = stack.pop()!;
    for (const dep of graph.get(current) ?? []) {
      if (seen.has(dep)) continue;
      seen.set(dep, [...chain, dep]);
      stack.push([dep, [...chain, dep]]);
    }
  }
  return seen;
}

describe("offline: the shape of lib/", () => {
  it("has no source file over 450 lines", () => {
    const long = files.map((file) => ({ file: name(file), lines: texts.get(file)!.split("\n").length - 1 })).filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("imports one way: core and db load no domain, http, route or schema code; schemas load no domain code", () => {
    const upward = new Set(["domain", "http", "routes", "schemas", "openapi"]);
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const layer = layerOf(file);
      for (const dep of deps) {
        const target = layerOf(dep);
        if ((layer === "core" && target !== "core") || (layer === "db" && upward.has(target)) || (layer === "schemas" && target === "domain")) {
          wrong.push(`${name(file)} -> ${name(dep)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("has no import cycles", () => {
    const cycles: string[] = [];
    for (const file of files) {
      const back = reachable(file).get(file);
      if (back) cycles.push(back.map(name).join(" -> "));
    }
    expect(cycles).toEqual([]);
  });

  it("keeps every model pure: no runtime import reaches lib/db", () => {
    const models = files.filter((file) => layerOf(file) === "domain" && /(^|-)model\.ts$/.test(file.split("/").pop()!));
    expect(models.length).toBeGreaterThanOrEqual(8);
    const impure = models.flatMap((model) => {
      const chains = [...reachable(model).entries()].filter(([dep]) => layerOf(dep) === "db").map(([, chain]) => chain);
      const shortest = chains.sort((a, b) => a.length - b.length)[0];
      return shortest ? [shortest.map(name).join(" -> ")] : [];
    });
    expect(impure).toEqual([]);
  });
});
