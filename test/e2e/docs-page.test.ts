/**
 * /docs in a real browser: headless Chromium (Debian's `chromium`; `.ci/run` installs it) renders the page after its
 * scripts ran, lists every operation of the route table, and leaves a screenshot in `.test-output/docs.png`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';
import { startTestHost } from '../support/local.ts';

const run = promisify(execFile);
const CHROMIUM = process.env['CHROMIUM'] ?? 'chromium';
const OUTPUT = join(process.cwd(), '.test-output');
// Chromium runs its virtual clock until the page is idle (scripts loaded, /openapi.json fetched and rendered).
const browse = (...args: string[]) =>
  run(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--virtual-time-budget=20000', ...args],
    { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
  );

let host: RunningHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host?.stop());

describe('the /docs page in headless Chromium', () => {
  it('lists every operation of the route table, each under its area', async () => {
    const { stdout: dom } = await browse('--dump-dom', `${host.url}/docs`);
    expect(dom).toContain('Dispatch operations service');
    const missing = (routes as readonly RouteDef[])
      .map((route) => `id="operations-${route.area}-${route.id.replace(/[^A-Za-z0-9]/g, '_')}"`)
      .filter((id) => !dom.includes(id));
    expect(missing).toEqual([]);
    expect(dom.match(/class="opblock-summary-path"/g)?.length).toBe(routes.length);
  }, 90_000);

  it('renders to a screenshot', async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const file = join(OUTPUT, 'docs.png');
    await browse('--window-size=1280,2400', `--screenshot=${file}`, `${host.url}/docs`);
    const png = readFileSync(file);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.readUInt32BE(20)).toBe(2400);
    // A blank page compresses to a few KB; the rendered reference is far larger.
    expect(png.length).toBeGreaterThan(100_000);
  }, 90_000);
});
