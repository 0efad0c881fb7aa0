import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, errors as playwrightErrors, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../../lib/routes/index.js";
import { useApiServer } from "../support/api.js";
import { scaledToTimeout, scaled } from "../support/timeouts.js";

/**
 * The HTML API reference in a real headless browser (Debian's Chromium): the page renders the
 * operations of the OpenAPI document fast enough, at `/api/v3/docs` and `/api/v3/docs/`, its
 * search finds operations, and neither the page nor the renderer requests anything outside
 * this machine's API (no CDN, no fonts, no telemetry), under the page's CSP.
 * Chromium is required: `.ci/run` installs it; without it this test fails (never skips).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/**
 * The first render of the operations list may take this long on a quiet machine: measured as
 * the page's main-thread CPU time (Chromium's `ThreadTime`), which other processes on a busy
 * machine barely move, where wall-clock time would (the suite runs files in parallel). Scaled
 * with the test timeout, as every time limit of the suite.
 */
const RENDER_BUDGET_MS = 8_000;
/** Wall-clock limit of a first render, however busy the machine (scaled with the test timeout). */
const RENDER_WALL_LIMIT_MS = 25_000;
const api = useApiServer();

let context: BrowserContext | undefined;
let profile: string | undefined;

/** A fresh profile each run; fails (never skips) without Chromium. */
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is required for the HTML reference test and was not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`,
    );
  }
  profile = mkdtempSync(join(tmpdir(), "api-docs-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Summaries from several groups: the operations list is rendered once the page shows them all. */
const SUMMARIES = ["List active locations ordered by name", "Create an item category", "Incremental change feed", "Delete a customer that has no documents"];

/** Runs in the page (no DOM types here): the rendered text contains every one of the texts. */
type PageGlobals = { document: { body: { innerText: string } } };
// biome-ignore lint/performance/useDomNodeTextContent: the rendered text (what a reader sees), not the DOM's
const shown = (texts: string[]) => texts.every((text) => (globalThis as unknown as PageGlobals).document.body.innerText.includes(text));

interface Opened {
  page: Page;
  requested: string[];
  problems: string[];
  /** Milliseconds from navigation to the rendered operations list. */
  elapsed: number;
  /** Main-thread CPU milliseconds of the page over the same span. */
  mainThreadMs: number;
}

/** Opens a path of the API in a new tab and waits, at most `limitMs`, for the operations list; says what timed out. */
async function openReference(path: string, limitMs: number): Promise<Opened> {
  const page = await context!.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on("request", (request) => requested.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  const cdp = await context!.newCDPSession(page);
  await cdp.send("Performance.enable");
  const threadTime = async () => (await cdp.send("Performance.getMetrics")).metrics.find((metric) => metric.name === "ThreadTime")?.value ?? 0;
  const threadBefore = await threadTime();
  const started = Date.now();
  const response = await page.goto(`${api().baseUrl}${path}`, { timeout: limitMs });
  expect(response?.status(), path).toBe(200);
  try {
    await page.waitForFunction(shown, SUMMARIES, { timeout: Math.max(1, limitMs - (Date.now() - started)), polling: 50 });
  } catch (error) {
    if (!(error instanceof playwrightErrors.TimeoutError)) throw error;
    throw new Error(
      `Timed out: ${path} did not render its operations list (${SUMMARIES.length} summaries) within ${limitMs} ms in Chromium. Requests so far: ${requested.join(", ")}. Page errors: ${problems.join("; ") || "none"}.`,
    );
  }
  const elapsed = Date.now() - started;
  return { page, requested, problems, elapsed, mainThreadMs: Math.round(((await threadTime()) - threadBefore) * 1000) };
}

/** Every request stays on the API's own host; the page's script and document come from where they should. */
function expectOwnRequests({ requested, problems }: Opened): void {
  const base = new URL(api().baseUrl);
  const outside = requested.filter((url) => !url.startsWith("data:") && !url.startsWith("blob:") && new URL(url).host !== base.host);
  expect(outside, `requests outside the API: ${outside.join(", ")}`).toEqual([]);
  expect(requested.filter((url) => url.endsWith("/openapi.json")).map((url) => new URL(url).pathname)).toEqual(["/api/v3/openapi.json"]);
  expect(requested.filter((url) => url.endsWith(".js")).map((url) => new URL(url).pathname)).toEqual(["/api/v3/docs/redoc.standalone.js"]);
  expect(problems, problems.join("\n")).toEqual([]);
}

describe("GET /api/v3/docs in Chromium", () => {
  it(`renders the operations list within ${RENDER_BUDGET_MS / 1000} s of the page's main thread (scaled by the test timeout), every request to the API itself and no CSP violation`, async ({
    task,
  }) => {
    for (const summary of SUMMARIES)
      expect(
        ROUTES.some((r) => r.summary === summary),
        summary,
      ).toBe(true);
    const budget = scaledToTimeout(RENDER_BUDGET_MS, task.timeout);
    const opened = await openReference("/api/v3/docs", scaledToTimeout(RENDER_WALL_LIMIT_MS, task.timeout));
    expect(
      opened.mainThreadMs,
      `first render of the operations list took ${opened.mainThreadMs} ms of the page's main thread (${opened.elapsed} ms by the clock); the budget is ${budget} ms`,
    ).toBeLessThanOrEqual(budget);
    // Error codes of an operation are rendered too (its 409 response lists the sync codes).
    await opened.page.waitForFunction(shown, ["sync_full_refresh_required"], { timeout: scaled(5_000) }).catch((error: unknown) => {
      throw new Error(`Timed out: the sync operation's 409 codes were not rendered within 5 s (${String(error)})`);
    });
    expectOwnRequests(opened);
    if (process.env.DOCS_SCREENSHOT) await opened.page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
    await opened.page.close();
  });

  it("serves the same page at /api/v3/docs/ (trailing slash): its script and document load from the same URLs", async ({ task }) => {
    const opened = await openReference("/api/v3/docs/", scaledToTimeout(20_000, task.timeout));
    expectOwnRequests(opened);
    await opened.page.close();
  });

  it("searches: typing an operation's words lists the matching operations", async ({ task }) => {
    const opened = await openReference("/api/v3/docs", scaledToTimeout(20_000, task.timeout));
    await opened.page.getByRole("search").locator("input").fill("convert estimate");
    const results = opened.page.locator('[data-role="search:results"] [role="menuitem"]');
    await results
      .first()
      .waitFor({ timeout: scaled(5_000) })
      .catch((error: unknown) => {
        throw new Error(`Timed out: the search for "convert estimate" listed no result within 5 s (${String(error)})`);
      });
    const labels = await results.evaluateAll((items) => items.map((item) => item.getAttribute("aria-label")));
    expect(labels).toEqual(expect.arrayContaining(["Convert an estimate into an invoice", "Convert an estimate into a sales order"]));
    expect(opened.problems, opened.problems.join("\n")).toEqual([]);
    await opened.page.close();
  });
});
