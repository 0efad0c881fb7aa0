import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/**
 * The HTML API reference (`GET /api/v3/docs`): Redoc's standalone bundle renders the OpenAPI
 * document in the browser. Everything comes from the API itself, never from a CDN: the page,
 * the renderer script (`GET /api/v3/docs/redoc.standalone.js`, the file of the `redoc` npm
 * package, copied next to the platform bundle at build time, see infra/bundling.ts) and the
 * document. The page's Content-Security-Policy allows nothing but this origin.
 */
export const RENDERER_FILE = "redoc.standalone.js";
/** Where the renderer comes from: the npm package and its file. */
export const RENDERER_SOURCE = "redoc/bundles/redoc.standalone.js";

/**
 * Only this origin: scripts, the document (fetch), images and fonts. Styles: Redoc (through
 * styled-components) writes its CSS into `<style>` elements at run time, which no policy can
 * allow by source, so `style-src` also has 'unsafe-inline' (styles only; inline scripts stay
 * forbidden). Search runs in a worker that Redoc's own script builds from a `blob:` URL:
 * `worker-src blob:` allows exactly that (a blob: URL can only be made by a script the page
 * already runs, and scripts come from this origin only).
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * Redoc's options (attributes of its element). Search is on (its index is built in a worker,
 * off the page's thread). `native-scrollbars`: the menu scrolls natively instead of through
 * Redoc's scrollbar script, which measures the whole rendered page on start-up (a large part
 * of the first render of a document this size). Redoc 2 has no lazy rendering: every
 * operation is rendered at once, which is why the document's size matters.
 */
const REDOC_OPTIONS = 'native-scrollbars="true" path-in-middle-panel="true" hide-download-button="false"';

/**
 * The page. Relative URLs, so it works under whatever prefix serves `/api/v3`, at
 * `/api/v3/docs` and at `/api/v3/docs/` alike: from the latter the document is one level up
 * and the script beside it.
 */
export function referencePage(requestPath = ""): string {
  const slash = requestPath.endsWith("/");
  const spec = slash ? "../openapi.json" : "openapi.json";
  const script = slash ? RENDERER_FILE : `docs/${RENDERER_FILE}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Inventory and Sales Management API v3 reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="${spec}" ${REDOC_OPTIONS}></redoc>
<script src="${script}"></script>
</body>
</html>
`;
}

/** Redoc's footer logo is an image on Redocly's CDN: served pages load nothing from elsewhere. */
const CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";

/** The renderer's file: next to the bundle (deployed), else in node_modules (local runs). */
function rendererPath(): string {
  const beside = fileURLToPath(new URL(`./${RENDERER_FILE}`, import.meta.url));
  if (existsSync(beside)) return beside;
  return createRequire(import.meta.url).resolve(RENDERER_SOURCE);
}

let script: Promise<string> | undefined;

/** The renderer script, read once on first use (never at import), with no reference to a CDN. */
export function rendererScript(): Promise<string> {
  script ??= readFile(rendererPath(), "utf8").then((text) => text.split(CDN_LOGO).join("data:,"));
  script.catch(() => (script = undefined));
  return script;
}
