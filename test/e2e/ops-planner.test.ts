/**
 * Issue 54 item 6 in a real browser: the planner's day on /ops. Two drivers of a planning, one north of the city and
 * one south, each with a position; a morning import of six tasks (three by each driver) and one whose windows closed
 * hours ago (markup in a task_ref). At 1440 px the OrgAdmin opens "Route planning", builds a dry run from the import
 * for the default fleet (the planning's drivers, one vehicle each at their last position), reviews it (each route on
 * the map, km and hours per runsheet as X24 answers them, the task left out with its reason) and applies it (X31):
 * the runsheets appear on the board as they were answered. In the afternoon the northern driver has picked up a task
 * and two new tasks are imported: the planner fits the unplanned tasks into the live routes as a dry run (X30), checks
 * it (the done pickup absent, its drop-off still there), applies it; the southern runsheet is cancelled from its
 * detail (X18) and its tasks show again among the unplanned. At 390 px the freed tasks are fitted back in, the planner
 * measured: nothing of it leaves the screen. In-process host (dynoxide, s3rver), headless Chromium, no tiles.
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

type User = Awaited<ReturnType<typeof invitedMember>>;
type Point = { latitude: number; longitude: number };
type Stop = { task_id: string; kind: 'pickup' | 'dropoff'; start_utc: string };
type Route = {
  id: string;
  name: string;
  driver_id?: string;
  planned_distance_m: number;
  planned_duration_s: number;
  stops: Stop[];
  added?: string[];
};
type Build = {
  id: string;
  kind: string;
  dry_run: boolean;
  status: string;
  applied_at?: string;
  result?: { runsheets: Route[]; unplanned: { task_id: string; code: string; detail: string }[] };
};
type Task = { id: string; task_ref?: string | null; status?: string };

let host: RunningHost;
let api: Client;
let browser: Browser;
let page: Page;
let planner: User;
let north: User;
let south: User;
let planning: string;
let morningJob: string;
const refs = new Map<string, string>();
const pageErrors: string[] = [];
const OUTPUT = join(process.cwd(), '.test-output', 'ops-console');

const NORTH = { latitude: 1.35, longitude: 103.8 };
const SOUTH = { latitude: 1.25, longitude: 103.8 };
const MARKED = '<img src=x onerror=window.__pwned=1>N-1';
const near = (p: Point, dLat: number, dLon: number) => ({ latitude: p.latitude + dLat, longitude: p.longitude + dLon });

const wait = (what: string, timeout = 60_000) => page.waitForFunction(what, { timeout });
/** The dry run applied, or the planner's refusal said (then the test fails with its words). */
async function appliedShown() {
  await wait(
    `document.getElementById('planner-status').textContent.startsWith('Applied') || document.getElementById('planner-status').dataset.outcome === 'refused'`,
    90_000,
  );
  expect(await page.$eval('#planner-status', (el) => el.textContent)).toMatch(/^Applied: /);
}
/** The dry run's review shown, or the planner's refusal said (then the test fails with its words). */
async function reviewShown() {
  await wait(
    `!document.getElementById('planner-review').hidden || document.getElementById('planner-status').dataset.outcome === 'refused'`,
    90_000,
  );
  expect(await page.$eval('#planner-status', (el) => `${el.getAttribute('data-outcome')}: ${el.textContent}`)).toMatch(
    /^review: /,
  );
}
const hour = 3_600_000;
function row(ref: string, from: Point, to: Point, openMs: number, closeMs: number): RoutingRow {
  return {
    ref,
    from,
    to,
    fromOpenMs: openMs,
    fromCloseMs: closeMs,
    toOpenMs: openMs,
    toCloseMs: closeMs + hour,
    fromServiceS: 60,
    toServiceS: 60,
    weightKg: 1,
  };
}

async function tasksOf(query: string): Promise<Task[]> {
  const read = await api.get<{ tasks: Task[] }>(`/v1/tasks?${query}&per_page=1000`, planner.token);
  expect(read.status).toBe(200);
  for (const t of read.body.tasks) if (t.task_ref) refs.set(t.id, t.task_ref);
  return read.body.tasks;
}
const builds = async () =>
  (await api.get<{ route_builds: Build[] }>(`/v1/plannings/${planning}/routes`, planner.token)).body.route_builds;
const buildRead = async (id: string) =>
  (await api.get<{ route_build: Build }>(`/v1/plannings/${planning}/routes/${id}`, planner.token)).body.route_build;
/** The newest build of the planning, whole (X25 then X24). */
const newestBuild = async () => buildRead((await builds())[0]!.id);
const runsheets = async () =>
  (
    await api.get<{ runsheets: { id: string; status: string; assigned_driver?: { id: string } }[] }>(
      `/v1/plannings/${planning}/runsheets`,
      planner.token,
    )
  ).body.runsheets;

/** The review's rows as the page shows them. */
const reviewRows = () =>
  page.$$eval('#planner-routes tr', (rows) =>
    rows.map((tr) => ({
      id: tr.getAttribute('data-runsheet'),
      km: tr.querySelector('[data-km]')?.getAttribute('data-km'),
      hours: tr.querySelector('[data-hours]')?.getAttribute('data-hours'),
      text: tr.textContent ?? '',
    })),
  );
const leftOut = () =>
  page.$$eval('#planner-left-out li[data-task]', (items) =>
    items.map((li) => ({
      task: li.getAttribute('data-task'),
      code: li.getAttribute('data-code'),
      text: li.textContent,
    })),
  );
const unplannedShown = () =>
  page.$$eval('#planner-unplanned li[data-task]', (items) => items.map((li) => li.getAttribute('data-task')).sort());

/** The review matches X24's answer: a row per runsheet with its km and hours, the routes drawn, the tasks left out. */
async function expectReviewOf(build: Build) {
  const result = build.result!;
  const rows = await reviewRows();
  expect(rows.map((r) => r.id)).toEqual(result.runsheets.map((r) => r.id));
  for (const [i, r] of result.runsheets.entries()) {
    expect(rows[i]!.km).toBe((r.planned_distance_m / 1000).toFixed(1));
    expect(rows[i]!.hours).toBe((r.planned_duration_s / 3600).toFixed(1));
    expect(rows[i]!.text).toContain(r.name);
  }
  const drawn = await page.$$eval('#map path.plan-route', (paths) =>
    paths.map((p) => p.getAttribute('data-plan-route')),
  );
  expect(drawn.sort()).toEqual(
    result.runsheets
      .filter((r) => r.stops.length > 1)
      .map((r) => r.id)
      .sort(),
  );
  const shown = await leftOut();
  expect(shown.map((l) => [l.task, l.code])).toEqual(result.unplanned.map((u) => [u.task_id, u.code]));
  for (const [i, u] of result.unplanned.entries()) expect(shown[i]!.text).toBe(`${refs.get(u.task_id)} · ${u.detail}`);
}

/** Every element of the planner inside the screen's width (a pixel's rounding spared), and the page not wider. */
async function expectPlannerFits(width: number, shot: string) {
  const outside = (await page.evaluate(`(() => {
    const out = [];
    for (const el of document.querySelectorAll('#planner, #planner *')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.left < -0.5 || box.right > ${width} + 0.5) out.push((el.id || el.tagName) + ' ' + box.left + '–' + box.right);
    }
    return out;
  })()`)) as string[];
  expect(outside, `planner boxes leaving the screen at ${width} px`).toEqual([]);
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, `planner-${shot}-${width}.png`), fullPage: true });
}

beforeAll(async () => {
  process.env['OPS_TILE_URL'] = 'none';
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const org = await newOrganisation(api, admin, 'Planner console');
  planner = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
  north = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  south = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  for (const [driver, at] of [
    [north, NORTH],
    [south, SOUTH],
  ] as const) {
    const put = await api.put(
      '/v1/driver/location',
      { ...at, client_time_utc: new Date().toISOString() },
      driver.token,
    );
    expect(put.status).toBe(200);
  }
  const now = Date.now();
  const rows = [
    row(MARKED, near(NORTH, 0.001, 0.001), near(NORTH, 0.005, 0.005), now - hour, now + 6 * hour),
    row('N-2', near(NORTH, 0.002, -0.001), near(NORTH, 0.006, -0.004), now - hour, now + 6 * hour),
    row('N-3', near(NORTH, -0.002, 0.002), near(NORTH, -0.004, 0.006), now - hour, now + 6 * hour),
    row('S-1', near(SOUTH, 0.001, 0.001), near(SOUTH, 0.005, 0.005), now - hour, now + 6 * hour),
    row('S-2', near(SOUTH, 0.002, -0.001), near(SOUTH, 0.006, -0.004), now - hour, now + 6 * hour),
    row('S-3', near(SOUTH, -0.002, 0.002), near(SOUTH, -0.004, 0.006), now - hour, now + 6 * hour),
    // Its windows closed hours ago: no vehicle can serve it (time_window).
    row('P-0', near(NORTH, 0.003, 0), near(NORTH, 0.004, 0), now - 6 * hour, now - 4 * hour),
  ];
  morningJob = (await importCsv(api, planner.token, routingCsv(rows))).importJobId;
  await tasksOf(`import_job_id=${morningJob}`);
  planning = (await planningWithDrivers(api, planner.token, 'Planner day', [north.id, south.id])).id;

  const { signedInConsole } = await import('../support/browser.ts');
  ({ browser, page } = await signedInConsole(host.url, planner, { width: 1440, height: 900 }, pageErrors));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  delete process.env['OPS_TILE_URL'];
});

describe('the planner on /ops (issue 54 item 6)', () => {
  it('builds a dry run from an import for the planning’s drivers, reviews it on the map and applies it (1440 px)', async () => {
    await page.click('#planner summary');
    await wait(`document.querySelector('#planner-planning option[value="${planning}"]')`);
    await page.select('#planner-planning', planning);
    // The default fleet: both drivers of the planning, each ticked, from their last position.
    await wait(`document.querySelectorAll('#planner-vehicles input[type=checkbox]:checked').length === 2`);
    const fleet = await page.$$eval('#planner-vehicles li', (items) => items.map((li) => li.textContent ?? ''));
    expect(fleet.some((line) => line.includes('from 1.3500, 103.8000'))).toBe(true);
    expect(fleet.some((line) => line.includes('from 1.2500, 103.8000'))).toBe(true);
    await wait(`document.querySelector('#planner-import option[value="${morningJob}"]')`);
    await page.select('#planner-import', morningJob);
    await wait(`document.getElementById('planner-unplanned-count').textContent === '7'`);
    await page.evaluate(`document.getElementById('planner-time').value = '1'`);
    await page.click('#planner-build');
    await reviewShown();

    const dry = await newestBuild();
    expect([dry.kind, dry.dry_run, dry.status]).toEqual(['build', true, 'completed']);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'planner-review-1440.png') });
    expect(dry.result!.runsheets).toHaveLength(2);
    expect(dry.result!.unplanned.map((u) => [refs.get(u.task_id), u.code])).toEqual([['P-0', 'time_window']]);
    await expectReviewOf(dry);
    // Nothing added by the dry run.
    expect(await runsheets()).toEqual([]);
    // The task left out is listed among the unplanned with its reason, its markup as text.
    const markedId = [...refs].find(([, ref]) => ref === MARKED)![0];
    const reasoned = await page.$$eval('#planner-unplanned li[data-code]', (items) =>
      items.map((li) => li.getAttribute('data-code')),
    );
    expect(reasoned).toEqual(['time_window']);
    expect(await page.$eval(`#planner-unplanned li[data-task="${markedId}"] strong`, (el) => el.textContent)).toBe(
      MARKED,
    );

    await page.click('#planner-apply');
    await appliedShown();
    expect(await page.$eval('#planner-status', (el) => el.textContent)).toBe(
      'Applied: 2 runsheets added to the planning.',
    );
    // Applied exactly as answered: the same runsheets, each assigned to its vehicle's driver, on the board.
    const applied = await buildRead(dry.id);
    expect(applied.applied_at).toBeTruthy();
    const listed = await runsheets();
    expect(listed.map((r) => r.id).sort()).toEqual(dry.result!.runsheets.map((r) => r.id).sort());
    for (const r of dry.result!.runsheets) {
      expect(listed.find((l) => l.id === r.id)?.assigned_driver?.id).toBe(r.driver_id);
      await wait(`document.querySelector('#board li[data-runsheet="${r.id}"]')`);
    }
    // The review closed, the plan off the map; only the task no vehicle could serve is unplanned.
    expect(await page.evaluate(`document.getElementById('planner-review').hidden`)).toBe(true);
    expect(await page.$$eval('#map path.plan-route', (paths) => paths.length)).toBe(0);
    await wait(`document.getElementById('planner-unplanned-count').textContent === '1'`);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  }, 150_000);

  it('fits the afternoon’s tasks into the live routes as a dry run, then applies it', async () => {
    const northSheet = (await runsheets()).find((r) => r.assigned_driver?.id === north.id)!;
    const markedId = [...refs].find(([, ref]) => ref === MARKED)![0];
    // The northern driver picks up N-1: that runsheet is under way, its pickup done, its load on board.
    const picked = await api.post(
      `/v1/driver/runsheets/${northSheet.id}/tasks/${markedId}/events`,
      { type: 'picked_up', happened_at_utc: new Date().toISOString() },
      north.token,
    );
    expect(picked.status, JSON.stringify(picked.body)).toBe(201);
    const now = Date.now();
    const afternoon = await importCsv(
      api,
      planner.token,
      routingCsv([
        row('A-1', near(NORTH, 0.003, 0.003), near(NORTH, 0.007, 0.001), now - hour, now + 5 * hour),
        row('A-2', near(NORTH, -0.001, -0.003), near(NORTH, 0.002, -0.006), now - hour, now + 5 * hour),
      ]),
    );
    await tasksOf(`import_job_id=${afternoon.importJobId}`);
    await page.click('#planner-refresh');
    await wait(`document.getElementById('planner-unplanned-count').textContent === '3'`);
    await page.click('input[name="planner-source"][value="unplanned"]');
    await page.click('#planner-insert');
    await reviewShown();

    const dry = await newestBuild();
    expect([dry.kind, dry.dry_run, dry.status]).toEqual(['insertion', true, 'completed']);
    await expectReviewOf(dry);
    const added = dry.result!.runsheets.flatMap((r) => r.added ?? []);
    expect(added.sort()).toEqual([...afternoon.taskIds].sort());
    // From the live state: N-1's pickup is done (absent), its drop-off still to do.
    const changedNorth = dry.result!.runsheets.find((r) => r.id === northSheet.id);
    if (changedNorth) {
      expect(changedNorth.stops.some((s) => s.task_id === markedId && s.kind === 'pickup')).toBe(false);
      expect(changedNorth.stops.some((s) => s.task_id === markedId && s.kind === 'dropoff')).toBe(true);
    }
    expect(await page.$eval('#planner-summary', (el) => el.textContent)).toContain(
      `Into the live routes: 2 tasks added to ${dry.result!.runsheets.length} runsheet`,
    );

    await page.click('#planner-apply');
    await appliedShown();
    expect((await buildRead(dry.id)).applied_at).toBeTruthy();
    expect((await tasksOf('planned=false')).map((t) => t.task_ref)).toEqual(['P-0']);
    // Latest events: the applied dry run, by the planning's name.
    await wait(
      `[...document.querySelectorAll('#notifications span')].some((s) => s.textContent === 'routes built · Planner day · 2 planned, 1 left out · dry run applied')`,
      30_000,
    );
    await wait(`document.getElementById('planner-unplanned-count').textContent === '1'`);
  }, 150_000);

  it('cancels a runsheet from its detail and shows its tasks among the unplanned again', async () => {
    const southSheet = (await runsheets()).find((r) => r.assigned_driver?.id === south.id)!;
    expect(southSheet.status).toBe('assigned');
    await page.click(`#board li[data-runsheet="${southSheet.id}"] button.rs-open`);
    await wait(`document.querySelector('#detail-actions [data-action="cancel"]')`);
    await page.click('#detail-actions [data-action="cancel"]');
    await page.type('#cancel-reason', 'van broke down');
    await page.click('[data-action="confirm-cancel"]');
    await wait(`document.getElementById('action-result').textContent.endsWith('cancelled.')`);
    const freed = (await tasksOf('planned=false')).map((t) => t.id).sort();
    expect(freed.map((id) => refs.get(id)).sort()).toEqual(['P-0', 'S-1', 'S-2', 'S-3']);
    await wait(`document.getElementById('planner-unplanned-count').textContent === '4'`);
    expect(await unplannedShown()).toEqual(freed);
  }, 90_000);

  it('fits the freed tasks back into the live routes at 390 px, the planner inside the screen', async () => {
    await page.click('#detail-close');
    await page.setViewport({ width: 390, height: 844 });
    await wait(`document.documentElement.scrollWidth <= 390`);
    await expectPlannerFits(390, 'before-review');
    await page.click('#planner-insert');
    await reviewShown();
    const dry = await newestBuild();
    expect([dry.kind, dry.dry_run, dry.status]).toEqual(['insertion', true, 'completed']);
    await expectReviewOf(dry);
    await expectPlannerFits(390, 'review');
    await page.$eval('#map', (el) => el.scrollIntoView());
    await (await page.$('#map'))!.screenshot({ path: join(OUTPUT, 'planner-review-map-390.png') });
    await page.click('#planner-apply');
    await appliedShown();
    const left = dry.result!.unplanned.map((u) => u.task_id).sort();
    expect(left.map((id) => refs.get(id))).toContain('P-0');
    await wait(`document.getElementById('planner-unplanned-count').textContent === '${left.length}'`);
    expect((await tasksOf('planned=false')).map((t) => t.id).sort()).toEqual(left);
    await expectPlannerFits(390, 'applied');
    await page.setViewport({ width: 1440, height: 900 });
    await expectPlannerFits(1440, 'applied');
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.$$eval('#planner img', (imgs) => imgs.length)).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 150_000);
});
