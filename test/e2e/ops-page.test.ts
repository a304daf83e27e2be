/**
 * /ops in a real browser: headless Chromium opens the live operations page, signs in as the organisation's
 * dispatcher with email and password, sees a driver appear and move as L1 fixes arrive (through the locations
 * stream and the `org.<id>` channel), sees an offer change state when the driver accepts it (R6, `pair.accepted` on
 * `planning.<id>`), and leaves a screenshot in `.test-output/ops.png`. Tiles are off (`?tiles=none`): the test runs
 * offline, and the markers show without them. Also: a pasted token (a SysAdmin with `?org=`), and the plain grid when
 * the map library does not load; drivers located before sign-in, by name, with the map fitted; refused sign-ins shown;
 * a token renewed before it expires (shortened to 8 s) without a reload; sign-out.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { until } from '../support/until.ts';

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
    // The driver located before sign-in is there at once, by name, and the map is fitted to it.
    await page.waitForFunction(`document.querySelector('tr[data-driver="${offered.id}"]')`, { timeout: 30_000 });
    expect(await page.$eval(`tr[data-driver="${offered.id}"] td`, (td) => td.textContent)).toBe('OrgDriver User');
    expect(
      await page.$eval('body', (body) => (body as unknown as { dataset: { fitted?: string } }).dataset.fitted),
    ).toBe('1');
    // Offers by runsheet and driver name, not id prefixes.
    const offer = await page.$$eval(`tr[data-pair="${pairId}"] td`, (cells) => cells.map((c) => c.textContent));
    expect(offer.slice(0, 2)).toEqual(['Runsheet 1', 'OrgDriver User']);
  }, 60_000);

  it('shows a driver appear and move as fixes arrive', async () => {
    await api.put('/v1/driver/location', fix(1.35, 103.85), mover.token);
    await page.waitForFunction(`document.querySelector('tr[data-driver="${mover.id}"][data-latitude="1.35"]')`, {
      timeout: 30_000,
    });
    // On the map too: one Leaflet circle marker per driver, the one located before sign-in and the mover; the map
    // widens to hold both.
    expect(await page.$$eval('#map path.leaflet-interactive', (paths) => paths.length)).toBe(2);
    expect(
      await page.$eval('body', (body) => (body as unknown as { dataset: { fitted?: string } }).dataset.fitted),
    ).toBe('2');
    await api.put('/v1/driver/location', fix(1.36, 103.86), mover.token);
    await page.waitForFunction(`document.querySelector('tr[data-driver="${mover.id}"][data-latitude="1.36"]')`, {
      timeout: 30_000,
    });
    expect(await page.$$eval('#drivers tr', (rows) => rows.length)).toBe(2);
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
    // A planning of another organisation: SysAdmin's ?org= leaves it out.
    const elsewhere = await newOrganisation(api, admin, 'Elsewhere');
    const stranger = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, elsewhere);
    const foreign = (await api.post<{ id: string }>('/v1/plannings', { name: 'Foreign' }, stranger.token)).body.id;
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
    await second.waitForFunction(`document.querySelector('[data-planning="${planningId}"]')`, { timeout: 30_000 });
    expect(await second.$(`[data-planning="${foreign}"]`)).toBeNull();
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

  it('shows a refused sign-in where the user looks: a wrong password, and a driver', async () => {
    const refused = await browser.newPage();
    await refused.goto(`${host.url}/ops?tiles=none`, { waitUntil: 'networkidle0', timeout: 60_000 });
    const signIn = async (email: string, password: string) => {
      await refused.$eval('#email', (el) => ((el as unknown as { value: string }).value = ''));
      await refused.type('#email', email);
      await refused.type('#password', password);
      await refused.click('#signin button[type=submit]');
      await refused.waitForFunction(`document.getElementById('error').textContent.length > 0`, { timeout: 30_000 });
      const shown = await refused.$eval('#error', (el) => ({
        text: el.textContent,
        height: (el as unknown as { offsetHeight: number }).offsetHeight,
      }));
      await refused.$eval('#error', (el) => (el.textContent = ''));
      return shown;
    };
    const wrong = await signIn(planner.email, 'not-the-password');
    expect(wrong.text).toMatch(/^Sign-in failed: /);
    expect(wrong.height).toBeGreaterThan(0);
    const driver = await signIn(mover.email, mover.password);
    expect(driver.text).toContain('this page is for dispatchers');
    expect(driver.height).toBeGreaterThan(0);
    expect(await refused.$eval('#app', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(true);
    await refused.close();
  }, 60_000);

  it('renews its token before it expires, stays live without a reload, and signs out', async () => {
    process.env['BEARER_TTL_S'] = '8';
    const renewing = await browser.newPage();
    try {
      await renewing.goto(`${host.url}/ops?tiles=none`, { waitUntil: 'networkidle0', timeout: 60_000 });
      await renewing.type('#email', planner.email);
      await renewing.type('#password', planner.password);
      await renewing.click('#signin button[type=submit]');
      await renewing.waitForFunction(`document.getElementById('status').textContent.includes('live')`, {
        timeout: 30_000,
      });
      // Past the first token's expiry (8 s), on a renewed one.
      await renewing.waitForFunction(`Number(document.body.dataset.renewals || 0) >= 2`, { timeout: 40_000 });
      await renewing.waitForFunction(`document.getElementById('status').textContent.includes('live')`, {
        timeout: 30_000,
      });
      await api.put('/v1/driver/location', fix(1.39, 103.89), mover.token);
      await renewing.waitForFunction(`document.querySelector('tr[data-driver="${mover.id}"][data-latitude="1.39"]')`, {
        timeout: 30_000,
      });
      expect(await renewing.$eval('#signin', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(true);
      await renewing.click('#signout');
      expect(await renewing.$eval('#signin', (el) => (el as unknown as { hidden: boolean }).hidden)).toBe(false);
      expect(await renewing.$eval('#error', (el) => el.textContent)).toBe('Signed out.');
      expect(await renewing.$eval('#status', (el) => el.textContent)).toBe('signed out');
    } finally {
      delete process.env['BEARER_TTL_S'];
      await renewing.close();
    }
  }, 90_000);

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
