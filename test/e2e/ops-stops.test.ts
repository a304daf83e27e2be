/**
 * Issue 55 item 8 in a real browser: the /ops console's runsheet detail. A runsheet built by route planning whose
 * seven pickups share one depot and whose drop-offs crowd one street corner, one of them far to the west (the map's
 * left edge): the stops' labels on the map stay inside the map and none covers another, at 1440 and at 390 px
 * (measured as the page lays them out). Its planned-stop list says each stop's status (done, failed, to do), its
 * window and its address. A task whose pickup failed does not list its drop-off as to do (X22 gives it no ETA: the
 * ETAs count it done, shared/planning/etas.ts): it is said as cancelled by the failed pickup. A task_ref holding markup
 * is text wherever it shows. In-process host (dynoxide, s3rver), headless Chromium, no tiles.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RoutingRow, routingCsv } from '../../bench/vrp/csv.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { planningWithDrivers } from '../support/runsheets.ts';
import { until } from '../support/until.ts';

type User = Awaited<ReturnType<typeof invitedMember>>;
type Task = { id: string; task_ref?: string | null; status: string; eta_dropoff_utc?: string | null };
type Stop = { task_id: string; kind: 'pickup' | 'dropoff' };
type Build = { status: string; result?: { runsheets: { id: string; stops: Stop[] }[] }; error?: unknown };

let host: RunningHost;
let api: Client;
let browser: Browser;
let page: Page;
let planner: User;
let driver: User;
let planning: string;
let built: { id: string; stops: Stop[] };
/** What the page threw or logged as an error: nothing, at the end. */
const pageErrors: string[] = [];

const OUTPUT = join(process.cwd(), '.test-output');
const HUB = { latitude: 1.3, longitude: 103.8 };
/** A task_ref that would run if it reached the page as HTML. */
const MARKED = '<img src=x onerror=window.__pwned=1>S-1';
const REFS = [MARKED, 'S-2', 'S-3', 'S-4', 'S-5', 'S-6', 'S-7'];
/** The drop-offs: five on one street corner (metres apart), one far west, one east. */
const DROPS = [
  { latitude: 1.305, longitude: 103.805 },
  { latitude: 1.3053, longitude: 103.8052 },
  { latitude: 1.3048, longitude: 103.8047 },
  { latitude: 1.3051, longitude: 103.8046 },
  { latitude: 1.3055, longitude: 103.8049 },
  { latitude: 1.302, longitude: 103.755 },
  { latitude: 1.308, longitude: 103.835 },
];

const wait = (what: string, timeout = 60_000) => page.waitForFunction(what, { timeout });

beforeAll(async () => {
  process.env['OPS_TILE_URL'] = 'none';
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Stops console');
  planner = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);

  const now = Date.now();
  const rows: RoutingRow[] = REFS.map((ref, i) => ({
    ref,
    from: HUB,
    to: DROPS[i]!,
    fromOpenMs: now - 3_600_000,
    fromCloseMs: now + 6 * 3_600_000,
    toOpenMs: now - 3_600_000,
    toCloseMs: now + 7 * 3_600_000,
    fromServiceS: 60,
    toServiceS: 60,
    weightKg: 2,
  }));
  const { importJobId } = await importCsv(api, planner.token, routingCsv(rows));
  const ready = await planningWithDrivers(api, planner.token, 'Crowded corner', [driver.id]);
  planning = ready.id;
  const van = {
    id: 'vanC',
    count: 1,
    driver_id: driver.id,
    start: HUB,
    shift_start_utc: new Date(now).toISOString(),
    shift_end_utc: new Date(now + 8 * 3_600_000).toISOString(),
  };
  const asked = await api.post<{ route_build: { id: string } }>(
    `/v1/plannings/${planning}/routes`,
    { import_job_id: importJobId, vehicles: [van], time_limit_s: 1, version_rev: ready.version_rev },
    planner.token,
  );
  expect(asked.status, JSON.stringify(asked.body)).toBe(202);
  const ended = await until(
    () =>
      api.get<{ route_build: Build }>(`/v1/plannings/${planning}/routes/${asked.body.route_build.id}`, planner.token),
    (read) => ['completed', 'failed'].includes(read.body.route_build.status),
    60_000,
  );
  expect(ended.body.route_build.status, JSON.stringify(ended.body.route_build.error)).toBe('completed');
  built = ended.body.route_build.result!.runsheets[0]!;
  expect(built.stops).toHaveLength(14);

  // The driver at the depot; S-1 delivered, S-2's pickup failed, S-3 picked up; the others still to do.
  const at = () => new Date().toISOString();
  expect((await api.put('/v1/driver/location', { ...HUB, client_time_utc: at() }, driver.token)).status).toBe(200);
  const report = async (ref: string, type: string, extra: Record<string, unknown> = {}) => {
    const sent = await api.post<{ task: Task }>(
      `/v1/driver/runsheets/${built.id}/tasks/${await taskIdOf(ref)}/events`,
      { type, happened_at_utc: at(), ...extra },
      driver.token,
    );
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
  };
  await report(MARKED, 'picked_up');
  await report(MARKED, 'delivered');
  await report('S-2', 'failed', { failure_reason: 'address_not_found' });
  await report('S-3', 'picked_up');

  const { signedInConsole } = await import('../support/browser.ts');
  ({ browser, page } = await signedInConsole(host.url, planner, { width: 1440, height: 900 }, pageErrors));
  await wait(`document.querySelector('#board li[data-runsheet="${built.id}"] button.rs-open')`);
  await page.click(`#board li[data-runsheet="${built.id}"] button.rs-open`);
  await wait(`document.querySelectorAll('#detail-stops li').length === 14`);
  await wait(`document.querySelectorAll('#map .stop-label').length === 14`);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  delete process.env['OPS_TILE_URL'];
});

async function taskIdOf(ref: string): Promise<string> {
  const read = await api.get<{ runsheet: { tasks: Task[] } }>(
    `/v1/plannings/${planning}/runsheets/${built.id}`,
    planner.token,
  );
  return read.body.runsheet.tasks.find((t) => t.task_ref === ref)!.id;
}

interface Box {
  label: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Every label the map shows (its tooltips, stops' and drivers'), and the map's own box, as the page lays them out. */
const laidOut = () =>
  page.evaluate(`(() => {
    const map = document.getElementById('map').getBoundingClientRect();
    const labels = [...document.querySelectorAll('#map .leaflet-tooltip')]
      .filter((tip) => tip.offsetParent !== null && getComputedStyle(tip).visibility !== 'hidden')
      .map((tip) => {
        const box = tip.getBoundingClientRect();
        return { label: tip.textContent, left: box.left, top: box.top, right: box.right, bottom: box.bottom };
      });
    return { map: { left: map.left, top: map.top, right: map.right, bottom: map.bottom }, labels };
  })()`) as Promise<{ map: Omit<Box, 'label'>; labels: Box[] }>;

/** The labels outside the map's box, and the pairs of labels that cover one another (a pixel's rounding spared). */
function faults({ map, labels }: { map: Omit<Box, 'label'>; labels: Box[] }) {
  const outside = labels.filter(
    (b) => b.left < map.left - 0.5 || b.right > map.right + 0.5 || b.top < map.top - 0.5 || b.bottom > map.bottom + 0.5,
  );
  const overlapping: string[] = [];
  for (const [i, a] of labels.entries())
    for (const b of labels.slice(i + 1))
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        overlapping.push(`${a.label} × ${b.label}`);
  return { outside: outside.map((b) => b.label), overlapping };
}

/** The stops' labels shown (not hidden for crowding), by their number. */
const shownStops = () =>
  page.$$eval('#map .stop-tip', (tips) =>
    tips
      .filter((tip) => (tip as unknown as { offsetParent: unknown }).offsetParent !== null)
      .map((tip) => tip.textContent ?? '')
      .sort((a, b) => Number(a) - Number(b)),
  );

/**
 * The labels as the map settles (a fit animates): then every stop's label shown (the number its row in the list
 * carries), all inside the map, none covering another. A screenshot of it in .test-output/ops-console/.
 */
async function expectLabelsClear(width: number) {
  const numbers = built.stops.map((_, i) => String(i + 1));
  let seen = await laidOut();
  let stops = await shownStops();
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Settled: the same boxes twice, 300 ms apart (a fit's zoom animates the labels with it).
    const before = JSON.stringify(seen);
    seen = await laidOut();
    stops = await shownStops();
    const found = faults(seen);
    const settled = JSON.stringify(seen) === before;
    if (settled && found.outside.length === 0 && found.overlapping.length === 0 && stops.length === numbers.length)
      break;
  }
  mkdirSync(join(OUTPUT, 'ops-console'), { recursive: true });
  await page.screenshot({ path: join(OUTPUT, 'ops-console', `stop-labels-${width}.png`) });
  const found = faults(seen);
  expect(found.outside, `labels leaving the map at ${width} px`).toEqual([]);
  expect(found.overlapping, `labels covering each other at ${width} px`).toEqual([]);
  expect(stops, `stop labels shown at ${width} px`).toEqual(numbers);
}

describe("a runsheet's stops on /ops (issue 55 item 8)", () => {
  it('lays the stops’ labels out inside the map, none covering another, at 1440 px and at 390 px', async () => {
    await expectLabelsClear(1440);
    // Each marker's number is its row's in the stop list; the stop's words are on its marker too (a title).
    const numbered = await page.$$eval('#map .stop-label', (labels) =>
      labels.map((label) => [label.getAttribute('data-order'), label.getAttribute('data-stop')]),
    );
    expect(numbered).toEqual(built.stops.map((stop, i) => [String(i + 1), `${stop.task_id}:${stop.kind}`]));
    const titles = await page.$$eval('#map path.stop-marker', (paths) =>
      paths.map((path) => path.querySelector('title')?.textContent ?? ''),
    );
    expect(titles.some((title) => title.includes(MARKED))).toBe(true);

    await page.setViewport({ width: 390, height: 844 });
    await wait(`document.documentElement.scrollWidth <= 390`);
    await expectLabelsClear(390);
    await page.setViewport({ width: 1440, height: 900 });
    await expectLabelsClear(1440);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.$$eval('#map img, #detail img', (imgs) => imgs.length)).toBe(0);
    // The layout threw nothing as the page resized twice.
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('lists each stop with its status (done, failed, to do), its window and its address', async () => {
    await wait(`document.querySelector('#detail-stops li[data-progress="failed"]')`, 30_000);
    const rows = await page.$$eval('#detail-stops li', (items) =>
      items.map((li) => ({
        stop: li.getAttribute('data-stop'),
        progress: li.getAttribute('data-progress'),
        ref: li.querySelector('strong')?.textContent,
        status: li.querySelector('.stop-progress')?.textContent,
        window: li.querySelector('.stop-window')?.textContent,
        address: li.querySelector('.stop-address')?.textContent,
        text: li.textContent,
      })),
    );
    expect(rows.map((row) => row.stop)).toEqual(built.stops.map((stop) => `${stop.task_id}:${stop.kind}`));
    for (const [i, row] of rows.entries()) {
      const pickup = row.stop!.endsWith(':pickup');
      expect(row.text).toMatch(new RegExp(`^${i + 1}\\. (pickup|drop-off) `));
      expect(row.window).toMatch(/^window \d{1,2}:\d\d.*–\d{1,2}:\d\d/);
      // The address the task gives the stop (the routing CSV names it after the task), as text.
      expect(row.address).toBe(`${row.ref} ${pickup ? 'pickup' : 'drop-off'}, Bench City`);
      const expected =
        row.ref === MARKED
          ? ['done', 'done']
          : row.ref === 'S-2'
            ? pickup
              ? ['failed', 'failed']
              : ['cancelled', 'cancelled: the pickup failed']
            : row.ref === 'S-3'
              ? pickup
                ? ['done', 'done']
                : ['to_do', 'to do']
              : ['to_do', 'to do'];
      expect([row.progress, row.status], `${row.ref} ${row.stop}`).toEqual(expected);
    }
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  }, 60_000);

  it('does not list the drop-off of a task whose pickup failed as to do, as X22’s ETAs do not', async () => {
    const failedId = await taskIdOf('S-2');
    const read = await api.get<{ runsheet: { tasks: Task[] } }>(
      `/v1/plannings/${planning}/runsheets/${built.id}`,
      planner.token,
    );
    const failed = read.body.runsheet.tasks.find((t) => t.id === failedId)!;
    expect(failed.status).toBe('failed');
    // The ETAs count it done: no ETA for its drop-off.
    expect(failed.eta_dropoff_utc).toBeNull();
    const dropoff = `#detail-stops li[data-stop="${failedId}:dropoff"]`;
    await wait(`document.querySelector('${dropoff}')?.getAttribute('data-progress') === 'cancelled'`, 30_000);
    const words = await page.$eval(dropoff, (li) => li.textContent ?? '');
    expect(words).not.toMatch(/to do|\bdone\b/);
    expect(words).toContain('cancelled: the pickup failed');
    // Nor does the map: its drop-off's marker is marked as not to be visited.
    expect(await page.$eval(`#map .stop-label[data-stop="${failedId}:dropoff"]`, (el) => el.dataset['progress'])).toBe(
      'cancelled',
    );
  }, 60_000);
});
