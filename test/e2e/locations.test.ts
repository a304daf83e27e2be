/** L1–L4 over HTTP: fixes and their order, tenancy, nearest and radius searches with filters, bad input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let orgA: string;
let orgB: string;
const _PASSWORD = 'a-good-long-password';
const _tag = Math.random().toString(36).slice(2, 7);

const member = async (role: Role, org: string) => {
  const { id, token } = await invitedMember(api, admin, role, ROLES[role], org);
  return { id, token };
};

const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
const fix = (latitude: number, longitude: number, secondsAgo = 0) => ({
  device_id: 'phone-1',
  latitude,
  longitude,
  altitude: 12.5,
  client_time_utc: at(secondsAgo),
  client_timezone: 'Asia/Singapore',
});

type Location = { user_id: string; version: number; latitude: number; distance_m: number; age_s: number };

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgA = await newOrganisation(api, admin, 'Fleet A');
  orgB = await newOrganisation(api, admin, 'Fleet B');
});
afterAll(() => host?.stop());

describe('L1 and L2', () => {
  it('stores the newest fix, counts versions, and ignores an older one', async () => {
    const driver = await member('OrgDriver', orgA);
    expect((await api.put('/v1/driver/location', fix(1.3, 103.8, 60), driver.token)).body).toEqual({ status: 'ok' });
    expect((await api.put('/v1/driver/location', fix(1.31, 103.81, 30), driver.token)).status).toBe(200);
    const older = await api.put('/v1/driver/location', fix(9, 9, 45), driver.token);
    expect(older).toMatchObject({ status: 200, body: { status: 'ok' } });
    const read = await api.get<{ location: Location & Record<string, unknown> }>(
      `/v1/driver-locations/${driver.id}`,
      driver.token,
    );
    expect(read.body.location).toMatchObject({
      user_id: driver.id,
      latitude: 1.31,
      longitude: 103.81,
      version: 2,
      device_id: 'phone-1',
      altitude: 12.5,
      client_timezone: 'Asia/Singapore',
      age_s: expect.any(Number),
    });
    expect(read.body.location).not.toHaveProperty('org_id');
  });

  it('shows a driver to its own organisation and SysAdmin only', async () => {
    const driver = await member('OrgDriver', orgA);
    await api.put('/v1/driver/location', fix(1.35, 103.9), driver.token);
    const ownAdmin = await member('OrgAdmin', orgA);
    const otherAdmin = await member('OrgAdmin', orgB);
    expect((await api.get(`/v1/driver-locations/${driver.id}`, ownAdmin.token)).status).toBe(200);
    expect((await api.get(`/v1/driver-locations/${driver.id}`, admin)).status).toBe(200);
    expect((await api.get(`/v1/driver-locations/${driver.id}`, otherAdmin.token)).status).toBe(404);
    const otherDriver = await member('OrgDriver', orgA);
    expect((await api.get(`/v1/driver-locations/${driver.id}`, otherDriver.token)).status).toBe(404);
    expect((await api.get(`/v1/driver-locations/${otherDriver.id}`, otherDriver.token)).status).toBe(404);
  });
});

describe('L3 and L4', () => {
  let near: { token: string; id: string };
  let far: { token: string; id: string };
  let foreign: { token: string; id: string };
  let dispatcher: string;

  beforeAll(async () => {
    near = await member('OrgDriver', orgA);
    far = await member('OrgDriver', orgA);
    foreign = await member('OrgDriver', orgB);
    dispatcher = (await member('OrgTransporter', orgA)).token;
    // Across the antimeridian from each other, 2 km and 10 km from the search point.
    await api.put('/v1/driver/location', fix(-17.0, 179.99), near.token);
    await api.put('/v1/driver/location', fix(-17.0, -179.92), far.token);
    await api.put('/v1/driver/location', fix(-17.0, 179.995), foreign.token);
  });

  const search = (query: string, token = dispatcher) =>
    api.get<{ locations: Location[] }>(`/v1/driver-locations?${query}`, token);

  it('L4 finds own-organisation drivers within the radius across the antimeridian, nearest first', async () => {
    const response = await search('latitude=-17.0&longitude=-179.99&radius=20000');
    expect(response.status).toBe(200);
    expect(response.body.locations.map((l) => l.user_id)).toEqual([near.id, far.id]);
    expect(response.body.locations[0]!.distance_m).toBeGreaterThan(2000);
    expect(response.body.locations[0]!.distance_m).toBeLessThan(2200);
    expect((await search('latitude=-17.0&longitude=-179.99&radius=5000')).body.locations.map((l) => l.user_id)).toEqual(
      [near.id],
    );
    const everyone = await search('latitude=-17.0&longitude=-179.99&radius=20000', admin);
    expect(everyone.body.locations.map((l) => l.user_id)).toContain(foreign.id);
  });

  it('L3 answers the nearest own-organisation driver, and 404 when nobody is visible', async () => {
    const nearest = await api.get<{ location: Location }>(
      '/v1/driver-locations/nearest?latitude=-17.0&longitude=-179.93',
      dispatcher,
    );
    expect(nearest.body.location.user_id).toBe(far.id);
    const other = await member(
      'OrgAdmin',
      (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Empty', kind: 'transporter' }, admin)).body
        .id,
    );
    expect((await api.get('/v1/driver-locations/nearest?latitude=0&longitude=0', other.token)).status).toBe(404);
  });

  it('filters by service type (kept current by A21) and by age', async () => {
    const me = await api.get<{ user: { driver_profile: { version_rev: string } } }>('/v1/me', far.token);
    await api.put(
      '/v1/driver/me',
      {
        user: {
          user: {
            driver_profile: { version_rev: me.body.user.driver_profile.version_rev, service_types: ['lorry_10ft'] },
          },
        },
      },
      far.token,
    );
    const lorries = await search('latitude=-17.0&longitude=-179.99&radius=20000&service_type=lorry_10ft');
    expect(lorries.body.locations.map((l) => l.user_id)).toEqual([far.id]);
    expect((await search('latitude=-17.0&longitude=-179.99&radius=20000&max_age_s=0')).body.locations).toEqual([]);
  });

  it('refuses bad input with field paths', async () => {
    const cases: [string, string][] = [
      ['latitude=91&longitude=0&radius=10', 'query.latitude'],
      ['latitude=0&longitude=abc&radius=10', 'query.longitude'],
      ['latitude=0&longitude=0&radius=0', 'query.radius'],
      ['latitude=0&longitude=0&radius=10000000', 'query.radius'],
      ['longitude=0&radius=10', 'query.latitude'],
      ['latitude=0&longitude=0', 'query.radius'],
      ['latitude=0&longitude=0&radius=10&service_type=rocket', 'query.service_type'],
      ['latitude=0&longitude=0&radius=10&max_age_s=-1', 'query.max_age_s'],
    ];
    for (const [query, path] of cases) {
      const response = await search(query);
      expect(response.status, query).toBe(400);
      expect(
        (response.body as unknown as { errors: { path: string }[] }).errors.map((e) => e.path),
        query,
      ).toContain(path);
    }
    expect((await api.get('/v1/driver-locations/nearest?latitude=0', dispatcher)).body).toMatchObject({
      errors: [{ path: 'query.longitude' }],
    });
    const bad = await api.put(
      '/v1/driver/location',
      { latitude: 'north', longitude: 200, client_time_utc: 'yesterday', client_timezone: 'Mars/Olympus' },
      near.token,
    );
    expect((bad.body as { errors: { path: string }[] }).errors.map((e) => e.path).sort()).toEqual([
      'client_time_utc',
      'client_timezone',
      'latitude',
      'longitude',
    ]);
    const future = await api.put(
      '/v1/driver/location',
      { ...fix(1, 1), client_time_utc: new Date(Date.now() + 3_600_000).toISOString() },
      near.token,
    );
    expect(future.body).toMatchObject({ status: 400, errors: [{ path: 'client_time_utc' }] });
    expect((await api.put('/v1/driver/location', fix(1, 1), dispatcher)).status).toBe(403);
    expect((await search('latitude=0&longitude=0&radius=10', near.token)).status).toBe(403);
  });
});

describe('A25 and the location', () => {
  it('a freelance driver assigned to an organisation is found by that organisation’s searches', async () => {
    const email = `free.${Math.random().toString(36).slice(2, 8)}@example.com`;
    await api.post('/v1/auth/register-driver', {
      user: { email, password: 'a-good-long-password', name: 'Free Lance' },
    });
    await api.post('/v1/auth/security-code', { user: { email } });
    const mail = await api.get<{ messages: { kind: string; data: Record<string, string> }[] }>(
      `/_local/outbox?to=${encodeURIComponent(email)}`,
    );
    const code = mail.body.messages.find((m) => m.kind === 'security_code')!.data['security_code'];
    await api.post('/v1/auth/verify-security-code', { user: { email, security_code: code } });
    const session = await loginAs(api, email, 'a-good-long-password');
    expect((await api.put('/v1/driver/location', fix(-33.86, 151.21), session.bearer_token)).status).toBe(200);
    const dispatcher = await member('OrgAdmin', orgB);
    const near = () =>
      api.get<{ locations: Location[] }>(
        '/v1/driver-locations?latitude=-33.86&longitude=151.21&radius=500',
        dispatcher.token,
      );
    expect((await near()).body.locations.map((l) => l.user_id)).not.toContain(session.user.id);
    const assigned = await api.post(
      '/v1/admin/users/assign-organisation',
      { user: { id: session.user.id, org_id: orgB } },
      admin,
    );
    expect(assigned.status).toBe(200);
    expect((await near()).body.locations.map((l) => l.user_id)).toContain(session.user.id);
  });
});
