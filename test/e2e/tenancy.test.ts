/**
 * Tenancy, generated from the route table: organisation A owns one of everything (a member, a driver with a
 * location, a notification, an import job, a planning with a finished job and its pairs). Every operation that takes
 * an id in its path and admits an organisation's roles is then called with A's ids by every admitted user of
 * organisation B (and by a freelance driver, and by B's partner client with every scope): each answers 404, and no stored item changes. A's ids inside B's own
 * requests (I8's object key, I4b's upload keys, P7's driver ids) are refused the same way. SysAdmin-only and
 * internal-worker operations are the platform's, not an organisation's, and T7's partner basics are readable by any
 * token by contract.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningHost, UPLOAD_BUCKET } from '../../lib/local/start.ts';
import { accessAllows } from '../../shared/auth/access.ts';
import { PARTNER_SCOPES, ROLES, type Role } from '../../shared/auth/roles.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';
import { type Client, client, clientCredentialsToken, invitedMember, loginAs } from '../support/http.ts';
import { IMPORT_WINDOW, putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { storedItems } from '../support/stored.ts';
import { until } from '../support/until.ts';

const ORGANISATION_ROLES: Role[] = ['OrgAdmin', 'OrgTransporter', 'OrgDriver', 'Merchant', 'Driver'];
const now = () => new Date().toISOString();

let host: RunningHost;
let api: Client;
let admin: string;
/** A's ids, by path parameter name. */
const ids: Record<string, string> = {};
/** B's callers (and a freelance driver), by role. */
const strangers: { role: Role; token: string }[] = [];

/** Does the route admit this stranger: a user of its role, or (Partner) B's partner client with every scope? */
const admits = (route: RouteDef, role: Role) =>
  role === 'Partner'
    ? accessAllows(route.access, { kind: 'client', roles: ['Partner'], scopes: PARTNER_SCOPES }, route.scopes)
    : accessAllows(route.access, { kind: 'user', roles: [role] });
/** A planning of organisation B's own, for references to A's things inside B's requests. */
let planningOfB: string;
/** Organisation A's id (X10's `org_id` named by a stranger). */
let orgOfA: string;
/** A freelance driver (no organisation) with a location. */
let freelancerId: string;

/** A self-registered driver, confirmed with the security code from the outbox, logged in. */
async function freelanceDriver() {
  const email = `freelance.${Math.random().toString(36).slice(2, 8)}@example.com`;
  await api.post('/v1/auth/register-driver', { user: { email, password: 'a-good-long-password', name: 'Freelance' } });
  await api.post('/v1/auth/security-code', { user: { email } });
  const mail = await api.get<{ messages: { data: Record<string, string> }[] }>(
    `/_local/outbox?to=${encodeURIComponent(email)}`,
  );
  const code = mail.body.messages[0]!.data['security_code'];
  await api.post('/v1/auth/verify-security-code', { user: { email, security_code: code } });
  return loginAs(api, email, 'a-good-long-password');
}
let versionRev: string;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const organisation = async (name: string) =>
    (await api.post<{ id: string }>('/v1/admin/organisations', { name, kind: 'transporter' }, admin)).body.id;
  const [orgA, orgB] = [await organisation('Tenant A'), await organisation('Tenant B')];
  orgOfA = orgA;
  const member = (role: Role, org: string) => invitedMember(api, admin, role, ROLES[role], org);

  // Organisation A's things.
  const adminA = await member('OrgAdmin', orgA);
  const merchantA = await member('Merchant', orgA);
  const driverA = await member('OrgDriver', orgA);
  ids['userID'] = driverA.id;
  ids['driver_id'] = driverA.id;
  ids['driverID'] = driverA.id;
  await api.put(
    '/v1/driver/location',
    { latitude: 1.3, longitude: 103.8, client_time_utc: now(), client_timezone: 'Asia/Singapore' },
    driverA.token,
  );
  await api.post(
    '/v1/notifications',
    { event_type: 'hello', event_data: { user_id: merchantA.id, title: 'Hello A' } },
    admin,
  );
  const notifications = await api.get<{ notifications: { id: string }[] }>('/v1/notifications', merchantA.token);
  ids['notification_id'] = notifications.body.notifications[0]!.id;

  const file = async (name: string, bytes: Buffer) => {
    const url = await api.get<{ file: { url: string; storage_upload_key: string } }>(
      `/v1/task-import-jobs/upload-url?filename=${name}`,
      merchantA.token,
    );
    await putUpload(url.body.file.url, bytes);
    ids['object_key'] = url.body.file.storage_upload_key;
    return { storage_upload_key: url.body.file.storage_upload_key };
  };
  const job = await api.post<{ id: string }>(
    '/v1/task-import-jobs',
    {
      files: [
        await file('tasks.csv', readFileSync('test/fixtures/tasks.csv')),
        await file('items.csv', readFileSync('test/fixtures/items.csv')),
      ],
      ...IMPORT_WINDOW,
    },
    merchantA.token,
  );
  ids['import_job_id'] = job.body.id;
  await api.post(`/v1/task-import-jobs/${job.body.id}/start`, {}, merchantA.token);
  await until(
    () => api.get<{ import_status: string }>(`/v1/task-import-jobs/${job.body.id}/status`, merchantA.token),
    (r) => ['completed', 'failed'].includes(r.body.import_status),
  );
  const tasksOfA = await api.get<{ tasks: { id: string }[] }>('/v1/tasks', merchantA.token);
  ids['taskID'] = tasksOfA.body.tasks[0]!.id;

  const planning = await api.post<{ id: string }>('/v1/plannings', { name: 'Tenant A run' }, adminA.token);
  ids['planningID'] = planning.body.id;
  ids['plan_id'] = planning.body.id;
  ids['runsheetID'] = 'RS-A';
  const pickup = { city: 'Singapore', latitude: 1.3, longitude: 103.8 };
  await api.post(
    `/v1/plannings/${planning.body.id}/runsheets`,
    { runsheets: [{ id: 'RS-A', tasks: [{ id: 'task-a', from_address: pickup }] }] },
    adminA.token,
  );
  const withDriver = await api.post<{ version_rev: string }>(
    `/v1/plannings/${planning.body.id}/drivers`,
    { drivers: [{ id: driverA.id }] },
    adminA.token,
  );
  await api.post(`/v1/plannings/${planning.body.id}/job`, { version_rev: withDriver.body.version_rev }, adminA.token);
  await until(
    () => api.get<{ current_status: string }>(`/v1/plannings/${planning.body.id}/job/status`, adminA.token),
    (r) => r.body.current_status === 'completed',
  );
  versionRev = (await api.get<{ version_rev: string }>(`/v1/plannings/${planning.body.id}`, adminA.token)).body
    .version_rev;
  const pairs = await api.get<{ pair_records: { id: string }[] }>(
    `/v1/broadcast-plans/${planning.body.id}/pairs`,
    adminA.token,
  );
  ids['pair_id'] = pairs.body.pair_records[0]!.id;
  // A route build of A's planning (X24), a dry run: it adds nothing, and it has ended before the tests look.
  const build = await api.post<{ route_build: { id: string } }>(
    `/v1/plannings/${planning.body.id}/routes`,
    routeBody(),
    adminA.token,
  );
  ids['buildID'] = build.body.route_build.id;
  await until(
    () =>
      api.get<{ route_build: { status: string } }>(
        `/v1/plannings/${planning.body.id}/routes/${ids['buildID']}`,
        adminA.token,
      ),
    (r) => ['completed', 'failed'].includes(r.body.route_build.status),
  );

  // Organisation B's people, and a freelance driver (no organisation at all).
  for (const role of ['OrgAdmin', 'OrgTransporter', 'OrgDriver', 'Merchant'] as const)
    strangers.push({ role, token: (await member(role, orgB)).token });
  planningOfB = (await api.post<{ id: string }>('/v1/plannings', { name: 'Tenant B run' }, strangerToken('OrgAdmin')))
    .body.id;
  strangers.push({ role: 'Driver', token: (await freelanceDriver()).bearer_token });
  // B's partner (T3) with every scope: it acts for B as B's OrgAdmin would, and no further.
  const partnerOfB = await api.post<{ client_key: string; secret_key: string }>(
    '/v1/admin/partner-authorizations',
    { name: 'Partner of B', webhook_url: 'https://hooks.example.com/b', org_id: orgB, scopes: PARTNER_SCOPES },
    admin,
  );
  strangers.push({
    role: 'Partner',
    token: await clientCredentialsToken(api, partnerOfB.body.client_key, partnerOfB.body.secret_key),
  });
  // Another freelance driver, out on the road: visible to SysAdmin and to themselves only.
  const other = await freelanceDriver();
  freelancerId = other.user.id;
  await api.put(
    '/v1/driver/location',
    { latitude: 1.31, longitude: 103.81, client_time_utc: now(), client_timezone: 'Asia/Singapore' },
    other.bearer_token,
  );
}, 120_000);
afterAll(() => host?.stop());

const strangerToken = (role: Role) => strangers.find((s) => s.role === role)!.token;

/** X23's body: A's task, one vehicle, a dry run of one second. */
const routeBody = () => ({
  task_ids: [ids['taskID']],
  vehicles: [
    {
      id: 'van',
      start: { latitude: 1.3, longitude: 103.8 },
      shift_start_utc: '2026-11-22T00:00:00Z',
      shift_end_utc: '2026-11-22T12:00:00Z',
    },
  ],
  time_limit_s: 1,
  dry_run: true,
  version_rev: versionRev,
});

/** A valid body for each write, so that the call reaches the domain (an invalid one would stop at 400). */
const bodies: Record<string, () => unknown> = {
  P4: () => ({ name: 'Taken over', version_rev: versionRev }),
  P5: () => ({ runsheets: [{ id: 'RS-B', tasks: [] }] }),
  P7: () => ({ drivers: [{ id: ids['driverID'] }] }),
  P9: () => ({ version_rev: versionRev }),
  I10: () => ({ prev_status: 'completed', next_status: 'failed' }),
  I11: () => ({ reason: 'not yours' }),
  R6: () => ({ happened_at_utc: now() }),
  R7: () => ({ happened_at_utc: now() }),
  X16: () => ({ driver_id: ids['driverID'] }),
  X23: () => routeBody(),
  X31: () => ({ version_rev: versionRev }),
  X30: () => ({ task_ids: [ids['taskID']], time_limit_s: 1, dry_run: true, version_rev: versionRev }),
  X18: () => ({ reason: 'not yours' }),
  X19: () => ({ happened_at_utc: now(), reason: 'not yours' }),
  X20: () => ({ type: 'arrived', happened_at_utc: now() }),
};

/**
 * T7's partner basics are the platform's, readable with any token by contract: not an organisation's thing. X29 is
 * public: its path's token is the credential (a recipient's tracking link, contract 4.11), and a wrong one is the same
 * 404 for everyone (test/e2e/tracking.test.ts).
 */
const PLATFORM_WIDE = new Set(['T7', 'X29']);

const tenancyRoutes = (routes as readonly RouteDef[]).filter(
  (route) =>
    route.path.includes('{') &&
    !PLATFORM_WIDE.has(route.id) &&
    [...ORGANISATION_ROLES, 'Partner' as const].some((role) => admits(route, role)),
);

describe('tenancy', () => {
  it('covers every operation that takes an id and admits an organisation’s roles', () => {
    const unknownParameters = tenancyRoutes.flatMap((route) =>
      [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).filter((name) => !(name in ids)),
    );
    expect(unknownParameters).toEqual([]);
    expect(tenancyRoutes.map((r) => r.id)).toEqual(
      expect.arrayContaining([
        'A23',
        'L2',
        'N3',
        'N4',
        'I5',
        'I11',
        'P3',
        'P16',
        'R1',
        'R2',
        'R6',
        'R7',
        'X23',
        'X30',
        'X24',
        'X25',
        'X31',
        'X27',
        'X28',
      ]),
    );
  });

  it('answers 404 to every stranger with another organisation’s ids, and changes nothing', async () => {
    const before = await storedItems();
    const wrong: string[] = [];
    let calls = 0;
    for (const route of tenancyRoutes) {
      const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(ids[name]!));
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : (bodies[route.id]?.() ?? {});
      for (const stranger of strangers) {
        if (!admits(route, stranger.role)) continue;
        const answer = await api.call(route.method, path, { token: stranger.token, body });
        calls++;
        if (answer.status !== 404)
          wrong.push(`${route.id} as ${stranger.role}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}`);
      }
    }
    console.log(`tenancy: ${calls} foreign calls over ${tenancyRoutes.length} operations`);
    expect(wrong).toEqual([]);
    expect(await storedItems()).toEqual(before);
  }, 120_000);

  it('refuses A’s ids inside B’s own requests (a query or a body), and changes nothing', async () => {
    const before = await storedItems();
    for (const stranger of strangers) {
      const download = await api.get(
        `/v1/files?bucket=${UPLOAD_BUCKET}&object_key=${encodeURIComponent(ids['object_key']!)}`,
        stranger.token,
      );
      expect(download, `I8 as ${stranger.role}`).toMatchObject({ status: 404, body: { Error: 'no such object' } });
    }
    for (const role of ['OrgAdmin', 'Merchant', 'Partner'] as const) {
      const job = await api.post(
        '/v1/task-import-jobs',
        {
          files: [{ storage_upload_key: ids['object_key'] }],
          ...IMPORT_WINDOW,
        },
        strangerToken(role),
      );
      expect(job.status, `I4b as ${role}`).toBe(400);
      expect(job.body['errors']).toEqual([
        { path: 'files[0].storage_upload_key', message: 'names no upload of yours' },
      ]);
    }
    for (const role of ['OrgAdmin', 'Partner'] as const) {
      const drivers = await api.post(
        `/v1/plannings/${planningOfB}/drivers`,
        { drivers: [{ id: ids['driverID'] }] },
        strangerToken(role),
      );
      expect(drivers.status, `P7 as ${role}`).toBe(400);
      expect((drivers.body['errors'] as { path: string }[])[0]!.path).toBe('drivers[0].id');
    }
    // A freelance driver belongs to no organisation: not to B's people, and not to another freelance driver either.
    for (const stranger of strangers.filter((s) =>
      ['OrgAdmin', 'OrgTransporter', 'Driver', 'Partner'].includes(s.role),
    ))
      expect((await api.get(`/v1/driver-locations/${freelancerId}`, stranger.token)).status, stranger.role).toBe(404);
    const sysadminView = await api.get(`/v1/driver-locations/${freelancerId}`, admin);
    expect(sysadminView.status).toBe(200);
    expect(await storedItems()).toEqual(before);
  });
});

describe('tenancy of object keys: `.`, `..` and empty segments, another organisation’s upload id', () => {
  const window = IMPORT_WINDOW;
  /** A's object, `uploads/<org A>/<upload id>/items.csv`, and keys of B's prefix that climb out of it towards it. */
  async function keys() {
    const [, orgA, uploadId, name] = /^uploads\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(ids['object_key']!)!;
    const orgB = (await api.get<{ user: { org_id: string } }>('/v1/me', strangerToken('OrgAdmin'))).body.user.org_id;
    return {
      orgB,
      uploadId: uploadId!,
      climbing: [
        `uploads/${orgB}/../${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}/%2e%2e/${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}/%2E%2E/${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}/%252e%252e/${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}/./../${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}/x/../../${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}/..%2f${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}\\..\\${orgA}/${uploadId}/${name}`,
        `uploads/${orgB}//${uploadId}/${name}`,
        `uploads/${orgB}/./${uploadId}/${name}`,
      ],
    };
  }

  it('I8 refuses a key of B’s prefix that climbs to A’s object: 400, never A’s bytes', async () => {
    const { climbing } = await keys();
    for (const stranger of strangers.filter((s) => s.role !== 'Driver')) {
      for (const key of climbing) {
        const download = await api.get(
          `/v1/files?bucket=${UPLOAD_BUCKET}&object_key=${encodeURIComponent(key)}`,
          stranger.token,
        );
        expect(download.status, `${stranger.role}: ${key}`).toBe(400);
        expect(download.body, key).toEqual({ Error: expect.stringMatching(/^object_key must be an object key/) });
      }
    }
  });

  it('I4b refuses those keys at their path, and stores nothing', async () => {
    const { climbing } = await keys();
    const before = await storedItems();
    for (const role of ['OrgAdmin', 'Merchant'] as const) {
      for (const key of climbing) {
        const job = await api.post(
          '/v1/task-import-jobs',
          { files: [{ storage_upload_key: key }], ...window },
          strangerToken(role),
        );
        expect(job.status, `${role}: ${key}`).toBe(400);
        expect(job.body['errors'], key).toEqual([
          { path: 'files[0].storage_upload_key', message: expect.stringMatching(/^must be an object key/) },
        ]);
      }
    }
    expect(await storedItems()).toEqual(before);
  });

  it('I4b refuses A’s upload id under B’s own prefix (no copy of A’s size and MD5), and stores nothing', async () => {
    const { orgB, uploadId } = await keys();
    const before = await storedItems();
    for (const role of ['OrgAdmin', 'Merchant'] as const) {
      // The upload is found by its id: its record is neither this key nor under B's prefix.
      for (const key of [`uploads/${orgB}/${uploadId}/anything.csv`, `uploads/${orgB}/${uploadId}/items.csv`]) {
        const job = await api.post(
          '/v1/task-import-jobs',
          { files: [{ storage_upload_key: key }], ...window },
          strangerToken(role),
        );
        expect(job.status, `${role}: ${key}`).toBe(400);
        expect(job.body['errors']).toEqual([
          { path: 'files[0].storage_upload_key', message: 'names no upload of yours' },
        ]);
      }
    }
    expect(await storedItems()).toEqual(before);
  });
});

/** A socket on `token`, its frames, and whether the server closed it. */
async function socketOf(token: string) {
  const socket = new WebSocket(`${host.url.replace('http', 'ws')}/ws?token=${token}`);
  const frames: { type: string; code?: string; channel?: string; channels?: string[] }[] = [];
  let closed = false;
  socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
  socket.on('close', () => {
    closed = true;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const wait = async (done: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return done();
  };
  return { socket, frames, wait, isClosed: () => closed };
}

describe('channels of another organisation (issue 33.2)', () => {
  it('are refused to every caller of B and to a freelance driver: A’s org, planning and user channels', async () => {
    const channels = [`org.${orgOfA}`, `planning.${ids['planningID']}`, `user.${ids['userID']}`];
    for (const { role, token } of strangers) {
      const stranger = await socketOf(token);
      stranger.socket.send(JSON.stringify({ action: 'subscribe', channels }));
      expect(await stranger.wait(() => stranger.frames.length >= 4), role).toBe(true);
      expect(stranger.frames, role).toEqual([
        { type: 'subscribed', channels: [] },
        ...channels.map((channel) => ({ type: 'error', code: 'forbidden', channel })),
      ]);
      stranger.socket.close();
    }
  });
});

describe('a socket of a deleted user (issue 28.3)', () => {
  const event = async (channel: string) =>
    (await api.post<{ delivered: number }>('/v1/events', { events: [{ channel, name: 'probe' }] }, admin)).body
      .delivered;

  it('is granted nothing more of its former organisation, receives nothing more, and is closed', async () => {
    const org = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Tenant W', kind: 'merchant' }, admin)
    ).body.id;
    const member = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const channels = [`user.${member.id}`, `org.${org}`];
    const subscribed = await socketOf(member.token);
    subscribed.socket.send(JSON.stringify({ action: 'subscribe', channels }));
    expect(await subscribed.wait(() => subscribed.frames.length > 0)).toBe(true);
    expect(subscribed.frames).toEqual([{ type: 'subscribed', channels }]);
    const later = await socketOf(member.token);

    expect((await api.delete('/v1/admin/users', { user: { email: member.email } }, admin)).status).toBe(200);
    expect(await event(`org.${org}`)).toBe(0);
    expect(await event(`user.${member.id}`)).toBe(0);
    expect(await subscribed.wait(subscribed.isClosed)).toBe(true);
    expect(subscribed.frames.filter((f) => f.type === 'event')).toEqual([]);

    later.socket.send(JSON.stringify({ action: 'subscribe', channels }));
    expect(await later.wait(later.isClosed)).toBe(true);
    expect(later.frames).toEqual([{ type: 'error', code: 'token_revoked', message: expect.any(String) }]);
  });
});

describe('tenancy of imported tasks (X10, X11, P5 task_ids)', () => {
  it('lists none of A’s tasks to B, refuses B naming A as org_id (403), and P5 of B naming A’s task (400)', async () => {
    for (const role of ['OrgAdmin', 'OrgTransporter', 'Merchant'] as const) {
      const listed = await api.get<{ tasks: { id: string }[] }>('/v1/tasks?per_page=1000', strangerToken(role));
      expect(listed.status).toBe(200);
      expect(listed.body.tasks.map((t) => t.id)).not.toContain(ids['taskID']);
      const byJob = await api.get<{ tasks: unknown[] }>(
        `/v1/tasks?import_job_id=${ids['import_job_id']}`,
        strangerToken(role),
      );
      expect(byJob.body.tasks).toEqual([]);
    }
    const named = await api.get<{ tasks: unknown[] }>(`/v1/tasks?org_id=${orgOfA}`, strangerToken('OrgAdmin'));
    expect(named.status).toBe(403);
    const before = await storedItems();
    const refused = await api.post<{ errors: { path: string }[] }>(
      `/v1/plannings/${planningOfB}/runsheets`,
      { runsheets: [{ id: 'RS-B', task_ids: [ids['taskID']] }] },
      strangerToken('OrgAdmin'),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]!.path).toBe('runsheets[0].task_ids[0]');
    expect(await storedItems()).toEqual(before);
  });
});
