import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { buildOpenApiDocument } from "../lib/openapi/document.js";

/** `npm run openapi [-- --out FILE]`: writes the OpenAPI 3.1 document (default ./openapi.json). */
const outIndex = process.argv.indexOf("--out");
const out = resolve(outIndex >= 0 && process.argv[outIndex + 1] ? process.argv[outIndex + 1]! : "openapi.json");
writeFileSync(out, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${out}`);
