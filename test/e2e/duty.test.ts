/**
 * X15: a driver goes on and off duty (contract 4.7). The state and when it began are the driver's own; they show in
 * every view of the driver's profile (A1, A16, A21, A23, X9) and are no part of `version_rev`, so a toggle never makes
 * a profile edit stale, not even one that races it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, freelanceDriver, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;
let orgAdmin: string;

type Profile = { version_rev: string; service_types: string[]; on_duty: boolean; on_duty_since: string };
type Me = { user: { id: string; created_at: string; driver_profile: Profile } };
type Duty = { on_duty: boolean; since: string };

const profileOf = async (token: string) => (await api.get<Me>('/v1/me', token)).body.user.driver_profile;
const setDuty = (token: string, on_duty: unknown) => api.put<Duty>('/v1/driver/duty', { on_duty }, token);

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Duty', kind: 'transporter' }, admin)).body
    .id;
  orgAdmin = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).token;
}, 60_000);
afterAll(() => host?.stop());

const { withMiddleware } = await import('../support/middleware.ts');

/** A21 with the version read earlier, setting one service type. */
const editProfile = (token: string, version_rev: string, serviceType: string) =>
  api.put(
    '/v1/driver/me',
    { user: { user: { driver_profile: { version_rev, service_types: [serviceType] } } } },
    token,
  );

/**
 * Runs `request` with `other` run once, just before the first write of `request` whose command starts with `command`
 * and whose input mentions `mentions` (its write, after its read). `other`'s own calls pass untouched.
 */
async function interleaved<T>(
  write: { command: string; mentions: string },
  other: () => Promise<void>,
  request: () => Promise<T>,
): Promise<T> {
  let ran = false;
  const out = await withMiddleware(
    'duty-between',
    (next, context) => async (args) => {
      if (
        !ran &&
        context.commandName?.startsWith(write.command) &&
        JSON.stringify(args.input).includes(write.mentions)
      ) {
        ran = true;
        await other();
      }
      return next(args);
    },
    request,
  );
  expect(ran).toBe(true);
  return out;
}

describe('X15 PUT /v1/driver/duty', () => {
  it('a new driver is on duty since the account was created', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const me = (await api.get<Me>('/v1/me', driver.token)).body.user;
    expect(me.driver_profile).toMatchObject({ on_duty: true, on_duty_since: me.created_at });
    // Going on duty when on duty already changes nothing.
    expect((await setDuty(driver.token, true)).body).toEqual({ on_duty: true, since: me.created_at });
  });

  it('toggles, keeps since when the same state is set again, and shows it in X9, A1, A16, A19 and A23', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const before = await profileOf(driver.token);
    const off = await setDuty(driver.token, false);
    expect(off.status).toBe(200);
    expect(off.body.on_duty).toBe(false);
    expect(off.body.since).not.toBe(before.on_duty_since);
    const again = await setDuty(driver.token, false);
    expect(again).toMatchObject({ status: 200, body: { on_duty: false, since: off.body.since } });

    const shown = { on_duty: false, on_duty_since: off.body.since };
    expect(await profileOf(driver.token)).toMatchObject(shown);
    expect((await loginAs(api, driver.email, driver.password)).user).toMatchObject({ driver_profile: shown });
    expect((await api.get(`/v1/admin/users/${driver.id}`, admin)).body).toMatchObject({ driver_profile: shown });
    expect((await api.get(`/v1/org/users/${driver.id}`, orgAdmin)).body).toMatchObject({
      user: { driver_profile: shown },
    });
    // A19's list too (the dispatcher's console shows who is off duty without a read per driver); not for non-drivers.
    const listed = await api.get<{ users: { id: string; driver_profile?: unknown }[] }>(
      '/v1/org/users?per_page=100',
      orgAdmin,
    );
    expect(listed.body.users.find((u) => u.id === driver.id)).toMatchObject({ driver_profile: shown });
    expect(listed.body.users.filter((u) => u.driver_profile === undefined).length).toBeGreaterThan(0);

    const on = await setDuty(driver.token, true);
    expect(on.body.on_duty).toBe(true);
    expect(on.body.since).not.toBe(off.body.since);
    expect(await profileOf(driver.token)).toMatchObject({ on_duty: true, on_duty_since: on.body.since });
  });

  it('serves freelance drivers (Driver) as well', async () => {
    const driver = await freelanceDriver(api, 'duty');
    expect((await setDuty(driver.bearer_token, false)).body).toMatchObject({ on_duty: false });
    expect(await profileOf(driver.bearer_token)).toMatchObject({ on_duty: false });
  });

  it('does not move version_rev: a profile edit made with the version read before a toggle succeeds and keeps it', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const read = await profileOf(driver.token);
    const off = await setDuty(driver.token, false);
    expect((await profileOf(driver.token)).version_rev).toBe(read.version_rev);
    const edit = await api.put<{ driver_profile: Profile }>(
      '/v1/driver/me',
      { user: { user: { driver_profile: { version_rev: read.version_rev, service_types: ['car'] } } } },
      driver.token,
    );
    expect(edit.status).toBe(200);
    expect(edit.body.driver_profile).toMatchObject({
      service_types: ['car'],
      on_duty: false,
      on_duty_since: off.body.since,
    });
    expect(await profileOf(driver.token)).toMatchObject({ service_types: ['car'], on_duty: false });
  });

  it('a toggle that lands between a profile edit’s read and its write neither fails the edit nor is lost', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const read = await profileOf(driver.token);
    const edit = await interleaved(
      { command: 'TransactWrite', mentions: 'van_1.7m' },
      async () => expect((await setDuty(driver.token, false)).status).toBe(200),
      () => editProfile(driver.token, read.version_rev, 'van_1.7m'),
    );
    expect(edit.status).toBe(200);
    expect(await profileOf(driver.token)).toMatchObject({ service_types: ['van_1.7m'], on_duty: false });
  });

  it('a profile edit that lands between a toggle’s read and its write neither fails the toggle nor is lost', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const read = await profileOf(driver.token);
    const toggle = await interleaved(
      { command: 'Update', mentions: 'on_duty' },
      async () => expect((await editProfile(driver.token, read.version_rev, 'motorcycle')).status).toBe(200),
      () => setDuty(driver.token, false),
    );
    expect(toggle).toMatchObject({ status: 200, body: { on_duty: false } });
    expect(await profileOf(driver.token)).toMatchObject({ service_types: ['motorcycle'], on_duty: false });
  });

  it('is 400 at on_duty for anything but a boolean, and stores nothing', async () => {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    for (const value of ['false', 0, null, 'off']) {
      const answer = await setDuty(driver.token, value);
      expect(answer.status, JSON.stringify(value)).toBe(400);
      expect(answer.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'on_duty' }] });
    }
    const missing = await api.put('/v1/driver/duty', {}, driver.token);
    expect(missing.body).toMatchObject({ status: 400, errors: [{ path: 'on_duty' }] });
    expect(await profileOf(driver.token)).toMatchObject({ on_duty: true });
  });

  it('is 403 for every role but Driver and OrgDriver', async () => {
    const transporter = (await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org)).token;
    for (const token of [admin, orgAdmin, transporter]) {
      const answer = await setDuty(token, false);
      expect(answer).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    }
  });
});
