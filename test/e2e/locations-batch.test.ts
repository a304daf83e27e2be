/**
 * X13 over HTTP (issue 27): a phone's buffer of fixes in one request, stored as L1 stores its newest; refused whole at
 * a bad fix's path; and what it costs, from the emulator's ConsumedCapacity (AWS's rules, deterministic units).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { type Tally, tallyObservers } from '../../shared/db/capacity.ts';
import { cellBox, encode } from '../../shared/locations/geo.ts';
import { GEO_TIME_GRANULARITY_S } from '../../shared/locations/locations.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;
const seen: { label: string; tally: Tally }[] = [];
const observer = (tally: Tally, label: string) => seen.push({ label, tally });

const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
const fix = (latitude: number, longitude: number, secondsAgo: number) => ({
  device_id: 'phone-1',
  latitude,
  longitude,
  altitude: 7,
  client_time_utc: at(secondsAgo),
  client_timezone: 'Asia/Singapore',
});
/** Ten fixes of a driver moving north about 30 m every 10 s, the newest `endSecondsAgo` ago. */
const moving = (fromLatitude: number, endSecondsAgo: number) =>
  Array.from({ length: 10 }, (_, i) => fix(fromLatitude + i * 0.00027, 103.8, endSecondsAgo + (9 - i) * 10));

type Location = Record<string, unknown> & { version: number; latitude: number; client_time_utc: string };

const driver = () => invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
const readOwn = async (d: { id: string; token: string }) =>
  (await api.get<{ location: Location }>(`/v1/driver-locations/${d.id}`, d.token)).body.location;

/** The tally of the one request `run` makes to operation `id`. */
async function measure(id: string, run: () => Promise<unknown>): Promise<Tally> {
  seen.length = 0;
  await run();
  const mine = seen.filter((entry) => entry.label === id);
  expect(mine).toHaveLength(1);
  return mine[0]!.tally;
}

beforeAll(async () => {
  // Units are exact only without retries: a loaded machine must not turn a slow emulator answer into a second attempt.
  process.env['DEPENDENCY_REQUEST_TIMEOUT_MS'] = '30000';
  tallyObservers.add(observer);
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = await newOrganisation(api, admin, 'Batch fleet');
});
afterAll(() => {
  resetClock();
  tallyObservers.delete(observer);
  return host?.stop();
});

describe('X13 POST /v1/driver/locations', () => {
  it('stores the newest fix as L1 would, one version up, and counts the rest as ignored', async () => {
    const d = await driver();
    // Out of order in the buffer: the newest (10 s ago) is in the middle.
    const fixes = [fix(1.3, 103.8, 40), fix(1.302, 103.802, 10), fix(1.301, 103.801, 25)];
    const reply = await api.post('/v1/driver/locations', { fixes }, d.token);
    expect(reply).toMatchObject({ status: 200, body: { status: 'ok', accepted: 1, ignored: 2 } });
    expect(Object.keys(reply.body).sort()).toEqual(['accepted', 'ignored', 'status']);
    const stored = await readOwn(d);
    expect(stored).toMatchObject({
      user_id: d.id,
      latitude: 1.302,
      longitude: 103.802,
      altitude: 7,
      device_id: 'phone-1',
      client_timezone: 'Asia/Singapore',
      client_time_utc: fixes[1]!.client_time_utc,
      version: 1,
    });

    // The same as an L1 of that fix: an L1 stores the same members.
    const twin = await driver();
    await api.put('/v1/driver/location', fixes[1], twin.token);
    const viaL1 = await readOwn(twin);
    const strip = ({ id: _id, user_id: _u, server_time: _s, age_s: _a, ...rest }: Location) => rest;
    expect(strip(stored)).toEqual(strip(viaL1));

    // A later batch whose newest is newer: stored, version + 1.
    const next = await api.post('/v1/driver/locations', { fixes: [fix(1.303, 103.803, 5)] }, d.token);
    expect(next.body).toEqual({ status: 'ok', accepted: 1, ignored: 0 });
    expect(await readOwn(d)).toMatchObject({ latitude: 1.303, version: 2 });
  });

  it('ignores a whole batch older than the stored fix (a buffer sent late), still 200', async () => {
    const d = await driver();
    await api.put('/v1/driver/location', fix(1.31, 103.81, 5), d.token);
    const late = await api.post(
      '/v1/driver/locations',
      { fixes: [fix(1.2, 103.7, 50), fix(1.21, 103.71, 40), fix(1.22, 103.72, 30)] },
      d.token,
    );
    expect(late).toMatchObject({ status: 200, body: { status: 'ok', accepted: 0, ignored: 3 } });
    expect(await readOwn(d)).toMatchObject({ latitude: 1.31, version: 1 });
  });

  it('refuses the whole batch at a bad fix path and stores nothing', async () => {
    const d = await driver();
    const cases: [unknown, string][] = [
      [
        {
          fixes: [
            fix(1.3, 103.8, 30),
            fix(1.3, 103.8, 20),
            fix(1.3, 103.8, 15),
            { ...fix(1.3, 103.8, 10), latitude: 91 },
          ],
        },
        'fixes[3].latitude',
      ],
      [
        { fixes: [fix(1.3, 103.8, 30), { ...fix(1.3, 103.8, 10), client_time_utc: 'yesterday' }] },
        'fixes[1].client_time_utc',
      ],
      [{ fixes: [fix(1.3, 103.8, 30), fix(1.3, 103.8, -3600)] }, 'fixes[1].client_time_utc'],
      [{ fixes: [fix(1.3, 103.8, 30), 'not a fix'] }, 'fixes[1]'],
      [{ fixes: [] }, 'fixes'],
      [{ fixes: Array.from({ length: 101 }, (_, i) => fix(1.3, 103.8, 200 - i)) }, 'fixes'],
      [{ fixes: { latitude: 1 } }, 'fixes'],
      [{}, 'fixes'],
    ];
    for (const [body, path] of cases) {
      const reply = await api.post<{ code: string; errors: { path: string }[] }>('/v1/driver/locations', body, d.token);
      expect(reply.status, path).toBe(400);
      expect(reply.body.code).toBe('validation_failed');
      expect(reply.body.errors.map((e) => e.path)).toContain(path);
    }
    expect((await api.get(`/v1/driver-locations/${d.id}`, d.token)).status).toBe(404);
    // 100 fixes is the most, and accepted.
    const full = await api.post(
      '/v1/driver/locations',
      { fixes: Array.from({ length: 100 }, (_, i) => fix(1.3, 103.8, 200 - i)) },
      d.token,
    );
    expect(full.body).toEqual({ status: 'ok', accepted: 1, ignored: 99 });
  });

  it('is for drivers only', async () => {
    const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const body = { fixes: [fix(1.3, 103.8, 10)] };
    expect((await api.post('/v1/driver/locations', body, dispatcher.token)).status).toBe(403);
    expect((await api.post('/v1/driver/locations', body)).status).toBe(401);
  });
});

describe('what fixes cost (ConsumedCapacity, AWS rules)', () => {
  it('a batch of 10 moving fixes costs what one moving L1 fix costs', async () => {
    const d = await driver();
    // Each into another precision-6 cell (issue 27: the index entry's sort key): 1.29 in w21z64, 1.2912 in w21z65,
    // the batch's newest (1.29893) in w21z6h, all in the partition w21z6.
    await api.put('/v1/driver/location', fix(1.29, 103.8, 200), d.token);
    const l1Move = await measure('L1', () => api.put('/v1/driver/location', fix(1.2912, 103.8, 150), d.token));
    const batch = await measure('X13', () => api.post('/v1/driver/locations', { fixes: moving(1.2965, 5) }, d.token));
    // The 0.5 RCU is the handler kit's read of the caller's token generation (see capacity.test.ts).
    expect(l1Move).toEqual({ calls: 2, rcu: 0.5, wcu: 3 });
    expect(batch).toEqual(l1Move);
    expect(batch.wcu).toBeLessThanOrEqual(3);
  });
});

describe('a driver standing still (issue 27.2)', () => {
  const G = GEO_TIME_GRANULARITY_S * 1000;
  /** Points inside one precision-9 cell (≈ 4.8 m), so inside its precision-6 cell: a phone's jitter standing still. */
  const box = cellBox(encode({ latitude: 1.3321, longitude: 103.8421 }, 9));
  const inCell = (i: number) => ({
    latitude: box.minLat + ((box.maxLat - box.minLat) * (1 + (i % 3))) / 4,
    longitude: box.minLon + ((box.maxLon - box.minLon) * (1 + ((i * 2) % 3))) / 4,
  });
  /** A fix taken a second before the (test's) server clock. */
  const fixAt = (point: { latitude: number; longitude: number }, serverMs: number) => ({
    ...point,
    client_time_utc: new Date(serverMs - 1000).toISOString(),
  });

  it('costs one item write a fix, and the index entry once a granule: 7 WCU over 6 fixes', async () => {
    const d = await driver();
    // The service's clock, moved (not the test's): the six fixes span a granule boundary wherever the run starts.
    const boundary = Math.ceil(Date.now() / G) * G + G;
    let now = boundary - 15_000;
    setClock(() => now);
    try {
      // South of the precision-6 cell (the index entry's sort key, issue 27), in the same precision-5 cell (no
      // crossing).
      const before = { ...inCell(0), latitude: cellBox(encode(inCell(0), 6)).minLat - 0.0003 };
      await api.put('/v1/driver/location', fixAt(before, now), d.token);
      now += 10_000;
      const arrive = await measure('L1', () => api.put('/v1/driver/location', fixAt(inCell(0), now), d.token));
      const still: Tally[] = [];
      for (let i = 1; i <= 6; i++) {
        now += 10_000;
        still.push(await measure('L1', () => api.put('/v1/driver/location', fixAt(inCell(i), now), d.token)));
      }
      // Arriving in the cell moves the index entry (the sort key changes): a moving fix's 3 WCU, as before.
      expect(arrive.wcu).toBe(3);
      // The first fix after the boundary refreshes the entry's geo_time (1 WCU); the other five write the item only.
      expect(still.map((tally) => tally.wcu)).toEqual([2, 1, 1, 1, 1, 1]);
      const perFix = still.reduce((sum, tally) => sum + tally.wcu, 0) / still.length;
      expect(perFix).toBeLessThanOrEqual(1.2);
      // The stored fix is the newest all the same: L2, L3 and L4 answer it, with every version counted.
      const newest = inCell(6);
      expect(await readOwn(d)).toMatchObject({ ...newest, version: 8 });
      const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
      const near = await api.get<{ location: Location }>(
        `/v1/driver-locations/nearest?latitude=${newest.latitude}&longitude=${newest.longitude}`,
        dispatcher.token,
      );
      expect(near.body.location).toMatchObject({ user_id: d.id, ...newest, version: 8, distance_m: 0 });
      const within = await api.get<{ locations: Location[] }>(
        `/v1/driver-locations?latitude=${newest.latitude}&longitude=${newest.longitude}&radius=50`,
        dispatcher.token,
      );
      expect(within.body.locations.find((l) => l['user_id'] === d.id)).toMatchObject({ ...newest, version: 8 });
    } finally {
      resetClock();
    }
  });

  it('keeps max_age_s exact although the index knows a fix time only to the granule', async () => {
    // An organisation of its own: nothing else is visible to its dispatcher.
    const own = await newOrganisation(api, admin, 'Granule fleet');
    const d = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, own);
    const point = { latitude: -33.8688, longitude: 151.2093 };
    // A fix late in a granule: its entry's geo_time is up to G older than the fix.
    const fixMs = Math.ceil(Date.now() / G) * G + G - 2000;
    let now = fixMs;
    setClock(() => now);
    try {
      await api.put('/v1/driver/location', fixAt(point, now), d.token);
      const dispatcher = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, own);
      const q = `latitude=${point.latitude}&longitude=${point.longitude}`;
      const search = async (maxAgeS: number) => ({
        nearest: (await api.get(`/v1/driver-locations/nearest?${q}&max_age_s=${maxAgeS}`, dispatcher.token)).status,
        within: (
          await api.get<{ locations: Location[] }>(
            `/v1/driver-locations?${q}&radius=100&max_age_s=${maxAgeS}`,
            dispatcher.token,
          )
        ).body.locations.length,
      });
      // 30 s later: the fix is 30 s old (its geo_time G + 28 s). max_age_s 31 finds it; 29 does not.
      now = fixMs + 30_000;
      expect(await search(31)).toEqual({ nearest: 200, within: 1 });
      expect(await search(29)).toEqual({ nearest: 404, within: 0 });
    } finally {
      resetClock();
    }
  });
});
