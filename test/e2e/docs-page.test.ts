/**
 * /docs in a real browser: headless Chromium (from the npm registry, see test/support/browser.ts) renders the page
 * after its scripts ran, lists every operation of the route table, and leaves a screenshot in `.test-output/docs.png`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';
import { launchBrowser } from '../support/browser.ts';
import { startTestHost } from '../support/local.ts';

const OUTPUT = join(process.cwd(), '.test-output');

let host: RunningHost;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  host = await startTestHost();
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 2400 });
  await page.goto(`${host.url}/docs`, { waitUntil: 'networkidle0', timeout: 60_000 });
  // Swagger UI renders after it fetched /openapi.json: wait until every operation is on the page.
  await page.waitForFunction(`document.querySelectorAll('.opblock-summary-path').length === ${routes.length}`, {
    timeout: 60_000,
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await host?.stop();
});

describe('the /docs page in headless Chromium', () => {
  it('lists every operation of the route table, each under its area', async () => {
    const dom = await page.content();
    expect(dom).toContain('Dispatch operations service');
    const missing = (routes as readonly RouteDef[])
      .map((route) => `id="operations-${route.area}-${route.id.replace(/[^A-Za-z0-9]/g, '_')}"`)
      .filter((id) => !dom.includes(id));
    expect(missing).toEqual([]);
    expect(dom.match(/class="opblock-summary-path"/g)?.length).toBe(routes.length);
  });

  it('renders to a screenshot', async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const file = join(OUTPUT, 'docs.png');
    await page.screenshot({ path: file });
    const png = readFileSync(file);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.readUInt32BE(20)).toBe(2400);
    // A blank page compresses to a few KB; the rendered reference is far larger.
    expect(png.length).toBeGreaterThan(100_000);
  });
});
