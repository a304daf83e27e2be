/**
 * Issue 52 item 2 over HTTP (contract 4.11): stops at risk. A hand-made runsheet (P5) given by X16 to a driver whose
 * fixes (L1, X13) take a stop's ETA past its window's end and back: `task.late_risk` once on `planning.<id>` and to a
 * `plannings` partner's webhook, nothing more for a second late fix, `task.back_on_time` once when a fix brings it on
 * time, nothing when the stop is done (X20) while at risk; and a driver standing still whose stop becomes late as the
 * service's clock moves, told by the sweep's clock check. The host's own sweep is held, so that each check is the one
 * the test names; the service's clock is moved a minute between fixes (a driver's check runs once a clock minute).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as sweepHandler } from '../../functions/workers/expire-offers.ts';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { db, mainTableName } from '../../shared/db/client.ts';
import { asFunction } from '../../shared/local-invocation.ts';
import { assignKey } from '../../shared/planning/keys.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { planningWithDrivers } from '../support/runsheets.ts';
import { openSocket } from '../support/sockets.ts';
import { partnerHook } from '../support/webhooks.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let planner: string;
let org: string;
type User = { id: string; token: string };
let hook: Awaited<ReturnType<typeof partnerHook>>;

/** The service's clock, moved by the tests (a minute between fixes: a driver's check runs once a clock minute). */
let now = Date.now();

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = await newOrganisation(api, admin, 'Risk day');
  planner = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
  hook = await partnerHook(api, admin, org, 'Plannings only', ['plannings']);
}, 120_000);

beforeEach(async () => {
  await host.pauseSweep();
  now = Date.now();
  setClock(() => now);
});
afterEach(() => {
  resetClock();
  host.resumeSweep();
});
afterAll(async () => {
  await hook?.close();
  await host?.stop();
});

const at = (minutes: number) => new Date(now + minutes * 60_000).toISOString();
const PICKUP = { latitude: 1.345, longitude: 103.85 };
/** About 20 km from the pickup: some 50 minutes at the default 30 km/h × 1.3. */
const FAR = { latitude: 1.2, longitude: 103.72 };
/** About 100 m from it. */
const NEAR = { latitude: 1.3459, longitude: 103.85 };

/** A planning whose one runsheet (P5) `RS-1` holds one task whose pickup closes in `closesIn` minutes, given to `driver`. */
async function runsheetFor(driver: User, closesIn: number) {
  const planning = await planningWithDrivers(api, planner, 'Risk day', [driver.id]);
  const added = await api.post(
    `/v1/plannings/${planning.id}/runsheets`,
    {
      runsheets: [
        {
          id: 'RS-1',
          tasks: [
            {
              id: 'T-1',
              task_ref: 'LC-041',
              from_address: { city: 'Singapore', ...PICKUP },
              to_address: { city: 'Singapore', latitude: 1.35, longitude: 103.86 },
              from_time_window: { start_time_utc: at(-30), end_time_utc: at(closesIn) },
              to_time_window: { start_time_utc: at(-30), end_time_utc: at(600) },
            },
          ],
        },
      ],
    },
    planner,
  );
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  const given = await api.post(`/v1/plannings/${planning.id}/runsheets/RS-1/assign`, { driver_id: driver.id }, planner);
  expect(given.status, JSON.stringify(given.body)).toBe(200);
  const dispatcher = await openSocket(host.url, planner);
  dispatcher.subscribe([`planning.${planning.id}`]);
  expect(await dispatcher.when(() => dispatcher.frames.some((f) => f.type === 'subscribed'))).toBe(true);
  const hooked = (type: string) =>
    hook.received.filter((d) => d.type === type && d.data['planning_id'] === planning.id);
  return { planningId: planning.id, dispatcher, hooked };
}

/** One fix (L1) at the service's clock. */
async function sendFix(token: string, point: { latitude: number; longitude: number }) {
  const sent = await api.put('/v1/driver/location', { ...point, client_time_utc: new Date(now).toISOString() }, token);
  expect(sent.status).toBe(200);
}

/** The stop's risk as the runsheet's claim keeps it (undefined: not at risk). */
const storedRisk = async (planningId: string) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: assignKey(planningId, 'RS-1') }))).Item?.[
    'late:pickup:T-1'
  ];

/** Enough time for a frame or a webhook that was going to come. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

describe('stops at risk (contract 4.11)', () => {
  it('a fix that makes a stop late tells it once, a fix that brings it on time tells that once, a stop done says nothing', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const fix = (point: { latitude: number; longitude: number }) => sendFix(driver.token, point);
    // The pickup closes in 10 minutes.
    const { planningId, dispatcher, hooked } = await runsheetFor(driver, 10);
    await fix(NEAR);
    now += 61_000;
    await fix(NEAR);
    await settle();
    expect(dispatcher.events('task.late_risk')).toHaveLength(0);

    // 20 km away: some 50 minutes to the pickup, 40 past its window's end.
    now += 61_000;
    await fix(FAR);
    expect(await dispatcher.when(() => dispatcher.events('task.late_risk').length > 0)).toBe(true);
    const [risk] = dispatcher.events('task.late_risk');
    expect(risk!.data).toMatchObject({
      planning_id: planningId,
      runsheet_id: 'RS-1',
      task_id: 'T-1',
      task_ref: 'LC-041',
      driver: { id: driver.id },
      stop_kind: 'pickup',
      window_end_utc: expect.any(String),
      eta_utc: expect.any(String),
    });
    expect(risk!.data!['late_by_s']).toBeGreaterThan(30 * 60);
    expect(Date.parse(String(risk!.data!['eta_utc']))).toBeGreaterThan(
      Date.parse(String(risk!.data!['window_end_utc'])),
    );
    expect(await dispatcher.when(() => hooked('task.late_risk').length > 0)).toBe(true);
    expect(hooked('task.late_risk')[0]!.data).toEqual(risk!.data);

    // Late still, a minute on: nothing more.
    now += 61_000;
    await fix({ latitude: 1.21, longitude: 103.72 });
    await settle();
    expect(dispatcher.events('task.late_risk')).toHaveLength(1);
    expect(hooked('task.late_risk')).toHaveLength(1);

    // Next to the pickup (a phone's buffer, X13), its window still open: on time again, once.
    now += 61_000;
    const batch = await api.post(
      '/v1/driver/locations',
      {
        fixes: [
          { ...FAR, client_time_utc: new Date(now - 5000).toISOString() },
          { ...NEAR, client_time_utc: new Date(now).toISOString() },
        ],
      },
      driver.token,
    );
    expect(batch.status).toBe(200);
    expect(await dispatcher.when(() => dispatcher.events('task.back_on_time').length > 0)).toBe(true);
    expect(dispatcher.events('task.back_on_time')[0]!.data).toMatchObject({
      task_id: 'T-1',
      stop_kind: 'pickup',
      late_by_s: 0,
    });
    now += 61_000;
    await fix(NEAR);
    await settle();
    expect(dispatcher.events('task.back_on_time')).toHaveLength(1);
    expect(await dispatcher.when(() => hooked('task.back_on_time').length === 1)).toBe(true);
    expect(await storedRisk(planningId)).toBeUndefined();

    // Far again: at risk again (a second transition), then picked up there: done, and nothing is said of it.
    now += 61_000;
    await fix(FAR);
    expect(await dispatcher.when(() => dispatcher.events('task.late_risk').length === 2)).toBe(true);
    expect(await storedRisk(planningId)).toBeDefined();
    const picked = await api.post(
      '/v1/driver/runsheets/RS-1/tasks/T-1/events',
      { type: 'picked_up', happened_at_utc: new Date(now).toISOString() },
      driver.token,
    );
    expect(picked.status, JSON.stringify(picked.body)).toBe(201);
    expect(await storedRisk(planningId)).toBeUndefined();
    await settle();
    expect(dispatcher.events('task.back_on_time')).toHaveLength(1);
    expect(dispatcher.events('task.late_risk')).toHaveLength(2);
    expect(hooked('task.back_on_time')).toHaveLength(1);
    expect(hooked('task.late_risk')).toHaveLength(2);
    dispatcher.socket.close();
  }, 120_000);

  it('a driver standing still becomes late as the clock moves: the sweep’s clock check tells it once', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    // The pickup closes in 12 minutes; the driver stands some 3 km away (about 8 minutes' drive).
    const { planningId, dispatcher, hooked } = await runsheetFor(driver, 12);
    const still = { latitude: 1.318, longitude: 103.85 };
    await sendFix(driver.token, still);
    now += 61_000;
    await sendFix(driver.token, still);
    const sweep = () => asFunction('workers/expire-offers', sweepHandler);
    now += 61_000;
    await sweep();
    await settle();
    expect(dispatcher.events('task.late_risk')).toHaveLength(0);

    // Five minutes on, no fix since: the ETA (from where the driver stands, now) is past the window's end.
    now += 5 * 60_000;
    await sweep();
    expect(await dispatcher.when(() => dispatcher.events('task.late_risk').length > 0)).toBe(true);
    expect(dispatcher.events('task.late_risk')[0]!.data).toMatchObject({ task_id: 'T-1', stop_kind: 'pickup' });
    expect(await dispatcher.when(() => hooked('task.late_risk').length > 0)).toBe(true);
    expect(await storedRisk(planningId)).toBeDefined();

    // The next minute's sweep, and the same minute's sweep again: nothing more.
    await sweep();
    now += 61_000;
    await sweep();
    await settle();
    expect(dispatcher.events('task.late_risk')).toHaveLength(1);
    expect(hooked('task.late_risk')).toHaveLength(1);
    dispatcher.socket.close();
  }, 120_000);
});
