/**
 * /ops in a real browser: headless Chromium opens the live operations page, signs in as the organisation's
 * dispatcher with email and password, sees a driver appear and move as L1 fixes arrive (through the locations
 * stream and the `org.<id>` channel), sees an offer change state when the driver accepts it (R6, `pair.accepted` on
 * `planning.<id>`), and leaves a screenshot in `.test-output/ops.png`. Tiles are off (`?tiles=none`): the test runs
 * offline, and the markers show without them. Also: a pasted token (a SysAdmin with `?org=`), and the plain grid when
 * the map library does not load.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

const OUTPUT = join(process.cwd(), '.test-output');

let host: RunningHost;
let api: Client;
let browser: Browser;
let page: Page;
let planner: Awaited<ReturnType<typeof invitedMember>>;
let offered: Awaited<ReturnType<typeof invitedMember>>;
let mover: Awaited<ReturnType<typeof invitedMember>>;
let planningId: string;
let org: string;
let pairId: string;

const fix = (latitude: number, longitude: number) => ({
  latitude,
  longitude,
  altitude: 10,
  client_time_utc: new Date().toISOString(),
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Ops', kind: 'transporter' }, admin)).body
    .id;
  planner = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
  offered = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  mover = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  await api.put('/v1/driver/location', fix(1.3005, 103.8), offered.token);

  // A planning whose job offers one runsheet to the driver next to its pickup.
  const planning = (await api.post<{ id: string }>('/v1/plannings', { name: 'Evening run' }, planner.token)).body;
  planningId = planning.id;
  const runsheet = {
    id: 'RS-1',
    name: 'Runsheet 1',
    tasks: [
      {
        id: 'task-1',
        total_item_count: 1,
        from_address: {
          street_address: '1 Depot Rd',
          city: 'Singapore',
          country: 'SG',
          latitude: 1.3,
          longitude: 103.8,
        },
      },
    ],
  };
  await api.post(`/v1/plannings/${planningId}/runsheets`, { runsheets: [runsheet] }, planner.token);
  const ready = await api.post<{ version_rev: string }>(
    `/v1/plannings/${planningId}/drivers`,
    { drivers: [{ id: offered.id }] },
    planner.token,
  );
  await api.post(
    `/v1/plannings/${planningId}/job`,
    { version_rev: ready.body.version_rev, max_candidates: 1, offer_ttl_s: 600 },
    planner.token,
  );
  const pairs = await until(
    async () =>
      (await api.get<{ pair_records: { id: string }[] }>(`/v1/broadcast-plans/${planningId}/pairs`, planner.token)).body
        .pair_records ?? [],
    (records) => records.length === 1,
  );
  pairId = pairs[0]!.id;

  const { launchBrowser } = await import('../support/browser.ts');
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 1366, height: 768 });
  await page.goto(`${host.url}/ops?tiles=none`, { waitUntil: 'networkidle0', timeout: 60_000 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await host?.stop();
});

describe('the /ops page in headless Chromium', () => {
  it('signs in with email and password and goes live on the organisation, user and planning channels', async () => {
    await page.type('#email', planner.email);
    await page.type('#password', planner.password);
    await page.click('#signin button[type=submit]');
    await page.waitForFunction(`document.getElementById('status').textContent.includes('live · 3 channels')`, {
      timeout: 30_000,
    });
    await page.waitForFunction(`document.querySelector('tr[data-pair="${pairId}"][data-state="broadcasted"]')`, {
      timeout: 30_000,
    });
    expect(await page.$eval('#app', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(false);
    // The sign-in form is gone from view once signed in.
    expect(await page.$eval('#signin', (el) => (el as unknown as { offsetHeight: number }).offsetHeight)).toBe(0);
  }, 60_000);

  it('shows a driver appear and move as fixes arrive', async () => {
    await api.put('/v1/driver/location', fix(1.35, 103.85), mover.token);
    await page.waitForFunction(`document.querySelector('tr[data-driver="${mover.id}"][data-latitude="1.35"]')`, {
      timeout: 30_000,
    });
    // On the map too: one Leaflet circle marker per driver heard of since signing in.
    expect(await page.$$eval('#map path.leaflet-interactive', (paths) => paths.length)).toBe(1);
    await api.put('/v1/driver/location', fix(1.36, 103.86), mover.token);
    await page.waitForFunction(`document.querySelector('tr[data-driver="${mover.id}"][data-latitude="1.36"]')`, {
      timeout: 30_000,
    });
    expect(await page.$$eval('#drivers tr', (rows) => rows.length)).toBe(1);
  }, 60_000);

  it('shows an offer change state when the driver accepts it', async () => {
    const accepted = await api.post(
      `/v1/broadcast-plans/${planningId}/pairs/${pairId}/accepted`,
      { happened_at_utc: new Date().toISOString() },
      offered.token,
    );
    expect(accepted.status).toBe(200);
    await page.waitForFunction(`document.querySelector('tr[data-pair="${pairId}"][data-state="accepted"]')`, {
      timeout: 30_000,
    });
    const notes = await page.$eval('#notifications', (el) => el.textContent ?? '');
    expect(notes).toContain('pair.accepted');
  }, 60_000);

  it('signs in with a pasted token too: a SysAdmin watching the organisation named by ?org=', async () => {
    const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
    const second = await browser.newPage();
    await second.goto(`${host.url}/ops?tiles=none&org=${org}`, { waitUntil: 'networkidle0', timeout: 60_000 });
    await second.type('#token', admin);
    await second.click('#signin button[type=submit]');
    // user, org and drivers.freelance, then the organisation's planning.
    await second.waitForFunction(`document.getElementById('status').textContent.includes('live · 4 channels')`, {
      timeout: 30_000,
    });
    await api.put('/v1/driver/location', fix(1.37, 103.87), mover.token);
    await second.waitForFunction(`document.querySelector('tr[data-driver="${mover.id}"][data-latitude="1.37"]')`, {
      timeout: 30_000,
    });
    await second.close();
  }, 60_000);

  it('without the map library (offline), shows the positions as dots on a plain grid', async () => {
    const offline = await browser.newPage();
    await offline.setRequestInterception(true);
    offline.on('request', (request) => {
      if (request.url().includes('/ops/assets/')) void request.abort();
      else void request.continue();
    });
    await offline.goto(`${host.url}/ops`, { waitUntil: 'networkidle0', timeout: 60_000 });
    await offline.type('#token', planner.token);
    await offline.click('#signin button[type=submit]');
    await offline.waitForFunction(`document.getElementById('status').textContent.includes('live')`, {
      timeout: 30_000,
    });
    await api.put('/v1/driver/location', fix(1.38, 103.88), mover.token);
    await offline.waitForFunction(`document.querySelector('#map .grid-dot[title="${mover.id}"]')`, {
      timeout: 30_000,
    });
    expect(await offline.$$eval('#map .leaflet-container, #map.leaflet-container', (found) => found.length)).toBe(0);
    await offline.close();
  }, 60_000);

  it('renders to a screenshot', async () => {
    mkdirSync(OUTPUT, { recursive: true });
    const file = join(OUTPUT, 'ops.png');
    await page.screenshot({ path: file });
    const png = readFileSync(file);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(1366);
    expect(png.readUInt32BE(20)).toBe(768);
  });
});
