import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { ROUTES } from "../../lib/routes/index.js";
import { useApiServer } from "../support/api.js";

/**
 * The HTML API reference in a real headless browser (Debian's Chromium): the page renders the
 * operations of the OpenAPI document, and neither the page nor the renderer requests anything
 * outside this machine's API (no CDN, no fonts, no telemetry), under the page's CSP.
 * Chromium is required: `.ci/run` installs it; without it this test fails (never skips).
 */
type PageGlobals = { document: { body: { innerText: string } } };
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const api = useApiServer();

let context: BrowserContext | undefined;
let profile: string | undefined;

/** A fresh profile each run; fails (never skips) without Chromium. */
async function launch(): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is required for the HTML reference test and was not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`);
  }
  profile = mkdtempSync(join(tmpdir(), "api-docs-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  return context;
}

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe("GET /api/v3/docs in Chromium", () => {
  it("renders the operations, with every request to the API itself and no CSP violation", async () => {
    const browser = await launch();
    const page = browser.pages()[0] ?? (await browser.newPage());
    const requested: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));

    const response = await page.goto(`${api().baseUrl}/api/v3/docs`);
    expect(response?.status()).toBe(200);
    const summaries = ["List active locations ordered by name", "Create an item category", "Incremental change feed", "Delete a customer that has no documents"];
    for (const summary of summaries) expect(ROUTES.some((r) => r.summary === summary), summary).toBe(true);
    // Runs in the page (no DOM types here): the rendered text contains every summary.
    const shown = (texts: string[]) => texts.every((text) => (globalThis as unknown as PageGlobals).document.body.innerText.includes(text));
    await page.waitForFunction(shown, summaries, { timeout: 30_000 });
    // Error codes of an operation are rendered too (its 409 response lists the sync codes).
    await page.waitForFunction(shown, ["sync_full_refresh_required"], { timeout: 10_000 });

    const base = new URL(api().baseUrl);
    const outside = requested.filter((url) => !url.startsWith("data:") && new URL(url).host !== base.host);
    expect(outside, `requests outside the API: ${outside.join(", ")}`).toEqual([]);
    expect(requested.some((url) => url.endsWith("/api/v3/openapi.json"))).toBe(true);
    expect(requested.some((url) => url.endsWith("/api/v3/docs/redoc.standalone.js"))).toBe(true);
    expect(problems, problems.join("\n")).toEqual([]);
    if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
  }, 60_000);
});
