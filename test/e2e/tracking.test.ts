/**
 * Issue 52 item 3 over HTTP (contract 4.11): recipients' tracking links. X27 makes a link (201) and shows the same one
 * after (200); X29 shows exactly 4.11's members (the key set is asserted, and the client checks each answer against
 * the closed schema); `on_the_way`, with the driver's position to 3 decimals, only while the task's drop-off is the
 * next stop of a hand-made runsheet of two imported tasks whose driver has a fix; a delivered task's link stops a day
 * later, any link 7 days after it was made (the service's clock moved); X28 revokes at once; an unknown token is the
 * same 404; a 61st read a minute of one token (from several addresses) or from one address is a 429 with
 * Retry-After; a flood of guessed tokens is a 404 each and no Scan; another organisation's task is a 404 at X27.
 * Real host, real tokens; requests from other loopback addresses (127.0.0.x) stand for other recipients.
 */
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { opsConfig } from '../../shared/ops/page.ts';
import { recordAwsCalls } from '../support/aws-calls.ts';
import { launchBrowser } from '../support/browser.ts';
import { checkConformance } from '../support/conformance.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { importCsv } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { planningWithDrivers } from '../support/runsheets.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let planner: string;
let plannerLogin: { email: string; password: string };
let org: string;
type User = { id: string; token: string };
let driver: User;
let ids: string[];
let planningId: string;

/** What a user typed that runs script if it reaches the page as markup. */
const MARKUP_REF = '<img src=x onerror=window.__pwned=1>';
const ORG_NAME = 'Tracking day <img src=x onerror=window.__pwned=2>';

const TRACKING_KEYS = [
  'city',
  'driver_first_name',
  'driver_position',
  'eta_utc',
  'failure_reason',
  'organisation_name',
  'status',
  'task_ref',
  'window',
];

type Tracking = {
  organisation_name: string;
  task_ref: string;
  status: string;
  failure_reason: string | null;
  window: { start_time_utc: string | null; end_time_utc: string | null } | null;
  eta_utc: string | null;
  city: string | null;
  driver_first_name: string | null;
  driver_position: { latitude: number; longitude: number } | null;
};
type Link = { tracking: { url: string; token_hint: string; expires_at: string } };

const soon = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const tokenOf = (link: Link) => link.tracking.url.split('/track/')[1]!;

/** Imports tasks of the organisation with coordinates and open windows; their ids in file order. */
async function importTasks(token: string, refs: string[]) {
  const header =
    'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,from_latitude,from_longitude,to_latitude,to_longitude';
  const lines = refs.map(
    (ref, i) =>
      `${ref},${i + 1} Depot Rd,Singapore,SG,${i + 7} Secret Lane,Singapore,SG,${soon(-30)},${soon(240)},Asia/Singapore,${soon(-30)},${soon(360)},Asia/Singapore,1.3${i}43,103.85${i}3,1.30${i}3,103.83${i}3`,
  );
  return (await importCsv(api, token, [header, ...lines].join('\n'))).taskIds;
}

const makeLink = (taskId: string, token = planner) => api.post<Link>(`/v1/tasks/${taskId}/tracking`, {}, token);
const track = (token: string) => api.get<{ tracking: Tracking }>(`/v1/tracking/${encodeURIComponent(token)}`);

/**
 * X29 from another loopback address (another recipient's phone): status, body and Retry-After, the answer checked
 * against the document as the test client checks its own.
 */
async function trackFrom(address: string, token: string) {
  const path = `/v1/tracking/${encodeURIComponent(token)}`;
  const answer = await new Promise<{ status: number; type: string | null; text: string; retryAfter?: string }>(
    (resolve, reject) => {
      const req = request(new URL(path, host.url), { localAddress: address }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers['content-type'] ?? null,
            text,
            retryAfter: res.headers['retry-after'] as string | undefined,
          }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  await checkConformance(host.url, 'GET', path, answer.status, answer.type, body);
  return { status: answer.status, body, retryAfter: answer.retryAfter };
}

const event = async (taskId: string, type: string) => {
  const sent = await api.post(
    `/v1/driver/runsheets/RS-TRACK/tasks/${taskId}/events`,
    { type, happened_at_utc: new Date().toISOString() },
    driver.token,
  );
  expect(sent.status, JSON.stringify(sent.body)).toBe(201);
};

/** A moment in the middle of a minute an hour or more from now: its rate windows are this test's alone. */
const freshMinute = (hoursAhead: number) => {
  const at = Math.floor((Date.now() + hoursAhead * 3_600_000) / 60_000) * 60_000 + 20_000;
  setClock(() => at);
};

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = await newOrganisation(api, admin, ORG_NAME);
  const member = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
  planner = member.token;
  plannerLogin = member;
  driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  ids = await importTasks(planner, ['TRK-1', 'TRK-2', 'TRK-3', 'TRK-4', MARKUP_REF]);
  const planning = await planningWithDrivers(api, planner, 'Tracking day', [driver.id]);
  planningId = planning.id;
  // A hand-made runsheet in task order: TRK-1's pickup, its drop-off, then TRK-2's, then the one named with markup.
  const added = await api.post(
    `/v1/plannings/${planningId}/runsheets`,
    { runsheets: [{ id: 'RS-TRACK', task_ids: [ids[0], ids[1], ids[4]] }] },
    planner,
  );
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  const given = await api.post(
    `/v1/plannings/${planningId}/runsheets/RS-TRACK/assign`,
    { driver_id: driver.id },
    planner,
  );
  expect(given.status, JSON.stringify(given.body)).toBe(200);
  const fix = { latitude: 1.30004, longitude: 103.85006, client_time_utc: new Date().toISOString() };
  expect((await api.put('/v1/driver/location', fix, driver.token)).status).toBe(200);
}, 240_000);

afterEach(() => resetClock());
afterAll(() => host?.stop());

describe('tracking links (X27–X29)', () => {
  it('X27 makes a link once and shows the same one after; X29 shows only 4.11’s members, on the way only while the drop-off is next', async () => {
    const [first, second] = [ids[0]!, ids[1]!];
    const made = await makeLink(first);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const token = tokenOf(made.body);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(made.body.tracking.url).toBe(`${host.url}/track/${token}`);
    expect(made.body.tracking.token_hint).toBe(token.slice(-4));
    const again = await makeLink(first);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(made.body);
    // 7 days after it was made: the task is not over yet.
    expect(Date.parse(made.body.tracking.expires_at) - Date.now()).toBeGreaterThan(7 * 24 * 3_600_000 - 120_000);

    // TRK-1's pickup is next: scheduled, with an ETA to the minute and no position.
    const scheduled = await track(token);
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
    expect(Object.keys(scheduled.body.tracking).sort()).toEqual(TRACKING_KEYS);
    expect(scheduled.body.tracking).toMatchObject({
      organisation_name: ORG_NAME,
      task_ref: 'TRK-1',
      status: 'scheduled',
      failure_reason: null,
      city: 'Singapore',
      driver_first_name: 'OrgDriver',
      driver_position: null,
    });
    expect(scheduled.body.tracking.window!.end_time_utc).toEqual(expect.any(String));
    expect(Date.parse(scheduled.body.tracking.eta_utc!) % 60_000).toBe(0);
    // Nothing of another task, stop or address: no id, no street, no other ref.
    const text = JSON.stringify(scheduled.body);
    for (const secret of ['Secret Lane', 'Depot Rd', 'TRK-2', first, second, 'RS-TRACK', planningId])
      expect(text).not.toContain(secret);

    // Picked up: its drop-off is next, on the way with the driver's position to 3 decimals.
    await event(first, 'picked_up');
    const onTheWay = (await track(token)).body.tracking;
    expect(onTheWay.status).toBe('on_the_way');
    expect(onTheWay.driver_position).toEqual({ latitude: 1.3, longitude: 103.85 });
    expect(Date.parse(onTheWay.eta_utc!) % 60_000).toBe(0);
    // TRK-2 meanwhile: scheduled, and no position.
    const other = await makeLink(second);
    expect(other.status).toBe(201);
    const waiting = (await track(tokenOf(other.body))).body.tracking;
    expect(waiting).toMatchObject({ task_ref: 'TRK-2', status: 'scheduled', driver_position: null });
    expect(Object.keys(waiting).sort()).toEqual(TRACKING_KEYS);

    // Delivered: no ETA, no position; the link now ends 24 hours after the delivery.
    await event(first, 'delivered');
    const delivered = (await track(token)).body.tracking;
    expect(delivered).toMatchObject({ status: 'delivered', eta_utc: null, driver_position: null });
    const shown = await makeLink(first);
    expect(shown.status).toBe(200);
    expect(tokenOf(shown.body)).toBe(token);
    const expires = Date.parse(shown.body.tracking.expires_at);
    expect(Math.abs(expires - (Date.now() + 24 * 3_600_000))).toBeLessThan(120_000);
    const gone = Date.now() + 24 * 3_600_000 + 120_000;
    setClock(() => gone);
    const expired = await track(token);
    expect(expired.status).toBe(404);
    resetClock();
    expect((await track(token)).status).toBe(200);
  }, 120_000);

  it('a link stops 7 days after it was made; X28 revokes at once, and a later X27 makes a new one', async () => {
    const task = ids[2]!;
    const made = await makeLink(task);
    expect(made.status).toBe(201);
    const token = tokenOf(made.body);
    expect((await track(token)).body.tracking).toMatchObject({ task_ref: 'TRK-3', status: 'scheduled', eta_utc: null });
    const sevenDays = Date.now() + 7 * 24 * 3_600_000 + 60_000;
    setClock(() => sevenDays);
    const expired = await track(token);
    expect(expired.status).toBe(404);
    // Past its time, X27 makes a new one (for a planner signed in at that time: the bearer token lasts an hour).
    const later = (await loginAs(api, plannerLogin.email, plannerLogin.password)).bearer_token;
    const renewed = await makeLink(task, later);
    expect(renewed.status).toBe(201);
    expect(tokenOf(renewed.body)).not.toBe(token);
    resetClock();

    const fresh = tokenOf(renewed.body);
    const revoked = await api.call('DELETE', `/v1/tasks/${task}/tracking`, { token: planner });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const after = await track(fresh);
    const unknown = await track('A'.repeat(43));
    expect(after.status).toBe(404);
    expect(unknown.status).toBe(404);
    // The same answer, but for its request id.
    const strip = (body: unknown) => ({ ...(body as Record<string, unknown>), request_id: undefined });
    expect(strip(after.body)).toEqual(strip(unknown.body));
    expect(strip(expired.body)).toEqual(strip(unknown.body));
    const remade = await makeLink(task);
    expect(remade.status).toBe(201);
    expect([token, fresh]).not.toContain(tokenOf(remade.body));
    expect((await track(tokenOf(remade.body))).status).toBe(200);
  }, 120_000);

  it('the page /track/{token} shows the ETA and the task_ref (as text) on a 390-px phone, and no other task', async () => {
    const link = await makeLink(ids[4]!);
    expect(link.status).toBe(201);
    // The page (HTML, no operation) with the console's Content-Security-Policy.
    const served = await fetch(link.body.tracking.url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-security-policy')).toBe(opsConfig().contentSecurityPolicy);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 390, height: 844 });
      await page.evaluateOnNewDocument(`document.addEventListener('securitypolicyviolation', (event) =>
        (window.__violations = window.__violations || []).push(event.violatedDirective))`);
      await page.goto(link.body.tracking.url);
      await page.waitForFunction(`document.getElementById('ref').textContent !== ''`, { timeout: 20_000 });
      const shown = (await page.evaluate(`(() => {
        const textOf = (id) => document.getElementById(id).textContent;
        return {
          ref: textOf('ref'),
          org: textOf('org'),
          status: textOf('status'),
          eta: textOf('eta'),
          page: document.body.innerText,
          images: document.images.length,
          pwned: window.__pwned,
          violations: window.__violations || [],
          width: document.documentElement.scrollWidth,
        };
      })()`)) as {
        ref: string;
        org: string;
        status: string;
        eta: string;
        page: string;
        images: number;
        pwned?: number;
        violations: string[];
        width: number;
      };
      expect(shown.ref).toBe(MARKUP_REF);
      expect(shown.org).toBe(ORG_NAME);
      expect(shown.status).toBe('Scheduled');
      expect(shown.eta).toMatch(/^about \d/);
      expect(shown.images).toBe(0);
      expect(shown.pwned).toBeUndefined();
      expect(shown.violations).toEqual([]);
      expect(shown.width).toBeLessThanOrEqual(390);
      for (const other of ['TRK-1', 'TRK-2', 'Secret Lane', 'Depot Rd']) expect(shown.page).not.toContain(other);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('another organisation’s task is a 404 at X27 and X28; a driver may not make links', async () => {
    const otherOrg = await newOrganisation(api, admin, 'Another shop');
    const stranger = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, otherOrg)).token;
    expect((await makeLink(ids[3]!, stranger)).status).toBe(404);
    expect((await api.call('DELETE', `/v1/tasks/${ids[3]}/tracking`, { token: stranger })).status).toBe(404);
    expect((await makeLink(ids[3]!, driver.token)).status).toBe(403);
    expect((await makeLink(ids[3]!, admin)).status).toBe(201);
  }, 60_000);

  it('a 61st read of one token in a minute is a 429 with Retry-After, from whichever address', async () => {
    const token = tokenOf((await makeLink(ids[3]!)).body);
    freshMinute(2);
    for (let i = 0; i < 60; i++) {
      const read = await trackFrom(`127.0.0.${2 + (i % 3)}`, token);
      expect(read.status, JSON.stringify(read.body)).toBe(200);
    }
    const over = await trackFrom('127.0.0.5', token);
    expect(over.status).toBe(429);
    expect(over.body['code']).toBe('rate_limited');
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('a flood of guessed tokens from one address: a 404 each, no Scan, then a 429 past 60 a minute', async () => {
    const calls = recordAwsCalls();
    freshMinute(3);
    const bodies = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const guess = Buffer.from(`${i}-${Math.random()}`).toString('base64url').padEnd(43, 'x').slice(0, 43);
      const read = await trackFrom('127.0.0.9', guess);
      expect(read.status).toBe(404);
      bodies.add(JSON.stringify({ ...read.body, request_id: undefined }));
    }
    expect(bodies.size).toBe(1);
    const over = await trackFrom('127.0.0.9', 'B'.repeat(43));
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
    const actions = new Set(calls.filter((c) => c.fn === 'imports/read-tracking').map((c) => c.action));
    expect(actions).toContain('dynamodb:GetItem');
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions).not.toContain('dynamodb:Query');
  }, 120_000);
});
