/**
 * Partner scopes (contract section 3, issue 36 items 1 and 2): a partner authorization (T3) carries `scopes`, its
 * client-credentials token (X5) carries them in `scope`, and each scope opens its operations, which then answer the
 * partner as an OrgAdmin of its organisation: `imports` uploads, imports and lists tasks; `plannings` plans, starts a
 * job, reads its result and pairs and assigns; `locations:read` finds the organisation's drivers. Without the scope
 * the same call is a 403 whose `detail` names what the token has and what the operation needs. Another
 * organisation's records stay 404. A scope change (T5) takes effect at the next token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, clientCredentialsToken, invitedMember, loginAs } from '../support/http.ts';
import { importTasks } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';
import { until } from '../support/until.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;
let otherOrg: string;
let foreignAdmin: string;

type Partner = { id: string; client_key: string; secret_key: string; scopes: string[] };
type Problem = { status: number; code: string; detail: string; errors?: { path: string; message: string }[] };

const partnerBody = (scopes?: string[]) => ({
  name: `Partner ${Math.random().toString(36).slice(2, 8)}`,
  webhook_url: 'https://hooks.example.com/scopes',
  org_id: org,
  ...(scopes ? { scopes } : {}),
});

/** A partner of `org` with `scopes` (T3's default when left out) and a fresh token of it (X5). */
async function partner(scopes?: string[]): Promise<Partner & { token: string }> {
  const created = await api.post<Partner>('/v1/admin/partner-authorizations', partnerBody(scopes), admin);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return {
    ...created.body,
    token: await clientCredentialsToken(api, created.body.client_key, created.body.secret_key),
  };
}

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

const drivers: { id: string; token: string }[] = [];
let foreignDriver: { id: string; token: string };

const fix = (latitude: number) => ({ latitude, longitude: 103.8, client_time_utc: new Date().toISOString() });

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  const organisation = async (name: string) =>
    (await api.post<{ id: string }>('/v1/admin/organisations', { name, kind: 'platform' }, admin)).body.id;
  org = await organisation('Scoped partner org');
  otherOrg = await organisation('Another org');
  foreignAdmin = (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, otherOrg)).token;
  for (const latitude of [1.3005, 1.3105]) {
    const driver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    expect((await api.put('/v1/driver/location', fix(latitude), driver.token)).status).toBe(200);
    drivers.push(driver);
  }
  foreignDriver = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, otherOrg);
  expect((await api.put('/v1/driver/location', fix(1.3001), foreignDriver.token)).status).toBe(200);
}, 180_000);
afterAll(() => host?.stop());

describe('a partner authorization’s scopes (T3–T6, X5)', () => {
  it('default to users:invite, are returned by T4–T6 and carried in the token’s scope claim', async () => {
    const made = await partner();
    expect(made.scopes).toEqual(['users:invite']);
    expect(claims(made.token)).toMatchObject({ roles: ['Partner'], org_id: org, scope: 'users:invite' });
    const read = await api.get<Partner>(`/v1/admin/partner-authorizations/${made.id}`, admin);
    expect(read.body.scopes).toEqual(['users:invite']);
    const listed = await api.get<{ partner_authorizations: Partner[] }>(
      '/v1/admin/partner-authorizations?per_page=1000',
      admin,
    );
    expect(listed.body.partner_authorizations.find((p) => p.id === made.id)?.scopes).toEqual(['users:invite']);
    const all = await partner(['plannings', 'imports', 'locations:read', 'imports']);
    expect(all.scopes).toEqual(['imports', 'plannings', 'locations:read']);
    expect(claims(all.token).scope).toBe('imports plannings locations:read');
  });

  it('refuse an unknown scope with a 400 at its path, at T3 and at T5', async () => {
    const created = await api.post<Problem>(
      '/v1/admin/partner-authorizations',
      partnerBody(['imports', 'tasks:write']),
      admin,
    );
    expect(created.status).toBe(400);
    expect(created.body.errors).toEqual([{ path: 'scopes[1]', message: expect.stringContaining('imports') }]);
    const made = await partner();
    const updated = await api.put<Problem>(
      `/v1/admin/partner-authorizations/${made.id}`,
      { name: 'x', webhook_url: 'https://hooks.example.com/scopes', scopes: 'imports' },
      admin,
    );
    expect(updated.status).toBe(400);
    expect(updated.body.errors?.[0]?.path).toBe('scopes');
  });

  it('change at T5 and take effect at the next token; a change ends the tokens issued before it (issue 42 item 7)', async () => {
    const made = await partner(['users:invite', 'plannings']);
    const before = made.token;
    expect((await api.get('/v1/plannings', before)).status).toBe(200);
    // The SysAdmin takes plannings away: the token issued before holds it no more (401), as after a revocation.
    const body = { name: 'Renamed', webhook_url: 'https://hooks.example.com/scopes', scopes: ['users:invite'] };
    const narrowed = await api.put<Partner>(`/v1/admin/partner-authorizations/${made.id}`, body, admin);
    expect(narrowed.body.scopes).toEqual(['users:invite']);
    const ended = await api.get<Problem>('/v1/plannings', before);
    expect(ended.status).toBe(401);
    expect(ended.body.code).toBe('unauthenticated');
    const child = { user: { email: `old.token.${Date.now()}@example.com`, org_id: org } };
    expect((await api.post('/v1/partner/invitations', child, before)).status).toBe(401);
    const narrow = await clientCredentialsToken(api, made.client_key, made.secret_key);
    expect((await api.get('/v1/plannings', narrow)).status).toBe(403);
    const updated = await api.put<Partner>(
      `/v1/admin/partner-authorizations/${made.id}`,
      { ...body, scopes: ['plannings'] },
      admin,
    );
    expect(updated.body.scopes).toEqual(['plannings']);
    expect((await api.get('/v1/plannings', narrow)).status).toBe(401);
    const after = await clientCredentialsToken(api, made.client_key, made.secret_key);
    // Left out, or the same, the scopes stay as they are and the tokens issued keep working.
    for (const scopes of [undefined, ['plannings']]) {
      const renamed = await api.put<Partner>(
        `/v1/admin/partner-authorizations/${made.id}`,
        { name: 'Renamed again', webhook_url: body.webhook_url, ...(scopes ? { scopes } : {}) },
        admin,
      );
      expect(renamed.body.scopes).toEqual(['plannings']);
    }
    expect((await api.get('/v1/plannings', after)).status).toBe(200);
    // users:invite was given up: A9 is now refused.
    const invite = await api.post<Problem>(
      '/v1/partner/invitations',
      { user: { email: `gone.${Date.now()}@example.com`, org_id: org, role_id: ROLES.OrgDriver } },
      after,
    );
    expect(invite.status).toBe(403);
    expect(invite.body.detail).toBe(
      'your token has Partner with scopes plannings; A9 needs a partner scope users:invite',
    );
  });
});

describe('a 403 says what the token has and what the operation needs', () => {
  it('for a partner without the scope, on each scope’s operations', async () => {
    const { token } = await partner();
    const refusals = [
      [
        'GET',
        '/v1/task-import-jobs/upload-url?filename=tasks.csv',
        'I1 needs OrgAdmin, Merchant or a partner scope imports',
      ],
      ['GET', '/v1/tasks', 'X10 needs OrgAdmin, OrgTransporter, Merchant, SysAdmin or a partner scope imports'],
      ['POST', '/v1/plannings', 'P2 needs OrgAdmin, OrgTransporter, Merchant, SysAdmin or a partner scope plannings'],
      [
        'GET',
        '/v1/driver-locations/nearest?latitude=1.3&longitude=103.8',
        'L3 needs SysAdmin, OrgAdmin, OrgTransporter or a partner scope locations:read',
      ],
      // No scope opens the operations staff's family.
      ['GET', '/v1/admin/task-import-jobs', 'I2 needs SysAdmin'],
    ] as const;
    for (const [method, path, need] of refusals) {
      const answer = await api.call<Problem>(method, path, { token, ...(method === 'POST' ? { body: {} } : {}) });
      expect(answer.status, path).toBe(403);
      expect(answer.body.code).toBe('forbidden');
      expect(answer.body.detail, path).toBe(`your token has Partner with scopes users:invite; ${need}`);
    }
  });

  it('for a user, naming the user’s roles', async () => {
    const driver = drivers[0]!;
    const answer = await api.post<Problem>('/v1/plannings', { name: 'nope' }, driver.token);
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toBe(
      'your token has OrgDriver; P2 needs OrgAdmin, OrgTransporter, Merchant, SysAdmin or a partner scope plannings',
    );
    const user = await api.get<Problem>('/v1/me', (await partner()).token);
    expect(user.body.detail).toBe(
      'your token has Partner with scopes users:invite; X9 needs a user token (partner and internal client tokens may not call it)',
    );
  });
});

describe('a partner with users:invite', () => {
  it('invites into its organisation (A9); with no scopes at all it may not', async () => {
    const email = `child.${Date.now()}@example.com`;
    const invited = await api.post(
      '/v1/partner/invitations',
      { user: { email, org_id: org, role_id: ROLES.OrgDriver } },
      (await partner()).token,
    );
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const none = await partner([]);
    expect(claims(none.token).scope).toBe('');
    const refused = await api.post<Problem>(
      '/v1/partner/invitations',
      { user: { email: `x${email}`, org_id: org, role_id: ROLES.OrgDriver } },
      none.token,
    );
    expect(refused.body.detail).toBe('your token has Partner with no scopes; A9 needs a partner scope users:invite');
  });
});

describe('a partner never hands out more than it holds (issue 42 item 1)', () => {
  const mails = async (to: string) =>
    (
      await api.get<{ messages: { kind: string; data: Record<string, string> }[] }>(
        `/_local/outbox?to=${encodeURIComponent(to)}`,
      )
    ).body.messages;
  const accept = async (email: string) => {
    const token = (await mails(email)).filter((m) => m.kind === 'invitation').at(-1)!.data['invitation_token'];
    const accepted = await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Invited', password: 'a-good-long-password', invitation_token: token },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    return loginAs(api, email, 'a-good-long-password');
  };

  it('A9 invites OrgDriver only (the default); any other role is a 403 that says so, and nothing is created', async () => {
    const { token } = await partner();
    for (const role of ['OrgAdmin', 'OrgTransporter', 'Merchant', 'SysAdmin', 'Partner', 'Driver'] as const) {
      const email = `escalate.${role.toLowerCase()}.${Date.now()}@example.com`;
      const refused = await api.post<Problem>(
        '/v1/partner/invitations',
        { user: { email, org_id: org, role_id: ROLES[role] } },
        token,
      );
      expect(refused.status, role).toBe(403);
      expect(refused.body.detail).toBe(
        `your token has Partner with scopes users:invite; it may invite a user with the role OrgDriver only, not ${role}`,
      );
      expect((await api.get(`/v1/admin/users/by-email/${encodeURIComponent(email)}`, admin)).status).toBe(404);
      expect(await mails(email)).toEqual([]);
    }
    const email = `child.driver.${Date.now()}@example.com`;
    const invited = await api.post('/v1/partner/invitations', { user: { email, org_id: org } }, token);
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const session = await accept(email);
    expect(session.user).toMatchObject({ roles: ['OrgDriver'], org_id: org });
    // What the probe reached with its OrgAdmin: none of it for the partner's driver.
    expect((await api.get('/v1/org/users', session.bearer_token)).status).toBe(403);
    expect((await api.get('/v1/plannings', session.bearer_token)).status).toBe(403);
  });

  it('may not re-invite a pending address into a role it could not grant, which keeps its invitation', async () => {
    const { token } = await partner();
    const email = `pending.admin.${Date.now()}@example.com`;
    expect(
      (await api.post('/v1/admin/invitations', { user: { email, org_id: org, role_id: ROLES.OrgAdmin } }, admin))
        .status,
    ).toBe(201);
    // Re-inviting would replace the pending role and send the partner's own invitation: refused, as OrgDriver too.
    for (const user of [
      { email, org_id: org },
      { email, org_id: org, role_id: ROLES.OrgAdmin },
    ]) {
      const refused = await api.post<Problem>('/v1/partner/invitations', { user }, token);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/; it may (re-)?invite a user with the role OrgDriver only, not OrgAdmin$/);
    }
    expect((await mails(email)).filter((m) => m.kind === 'invitation')).toHaveLength(1);
    expect((await accept(email)).user).toMatchObject({ roles: ['OrgAdmin'] });
  });

  it('cannot widen its own scopes, nor reach any operation that grants roles or scopes', async () => {
    const made = await partner(['users:invite', 'plannings', 'imports', 'locations:read']);
    const body = { name: 'Mine', webhook_url: 'https://hooks.example.com/scopes', org_id: org, scopes: ['plannings'] };
    const attempts = [
      ['PUT', `/v1/admin/partner-authorizations/${made.id}`, body],
      ['POST', '/v1/admin/partner-authorizations', body],
      ['POST', '/v1/admin/clients', { name: 'Worker', roles: ['ImportWorker'] }],
      ['POST', '/v1/org-admin/invitations', { user: { email: 'x@example.com', role_id: ROLES.OrgAdmin } }],
      ['POST', '/v1/org-transporter/invitations', { user: { email: 'x@example.com' } }],
      ['POST', '/v1/admin/invitations', { user: { email: 'x@example.com', org_id: org } }],
      ['POST', '/v1/admin/invitations/bulk', { user: { emails: ['x@example.com'], org_id: org } }],
      ['POST', '/v1/admin/users/assign-organisation', { user: { id: drivers[0]!.id, org_id: org } }],
      ['PUT', '/v1/users/profile', { user: { id: drivers[0]!.id, name: 'Renamed' } }],
    ] as const;
    for (const [method, path, sent] of attempts) {
      const answer = await api.call<Problem>(method, path, { token: made.token, body: sent });
      expect(answer.status, path).toBe(403);
      expect(answer.body.detail, path).toMatch(/^your token has Partner with scopes /);
    }
  });
});

describe('a partner with imports', () => {
  it('uploads a CSV, runs an import job, lists and reads its tasks and downloads its file; never another org’s', async () => {
    const { token } = await partner(['imports']);
    const ids = await importTasks(api, token, ['P-1', 'P-2']);
    expect(ids).toHaveLength(2);
    const task = await api.get<{ task: { id: string; task_ref: string; import_job_id: string } }>(
      `/v1/tasks/${ids[0]}`,
      token,
    );
    expect(task.body.task.task_ref).toBe('P-1');
    const jobId = task.body.task.import_job_id;
    const job = await api.get<{
      id: string;
      upload_record: { files: { storage_upload_key: string; storage_upload_bucket: string }[] };
    }>(`/v1/task-import-jobs/${jobId}`, token);
    expect(job.status).toBe(200);
    const result = await api.get<{ total_tasks_imported: number }>(`/v1/task-import-jobs/${jobId}/result`, token);
    expect(result.body.total_tasks_imported).toBe(2);
    const listed = await api.get<{ task_import_jobs: { id: string }[] }>('/v1/task-import-jobs', token);
    expect(listed.body.task_import_jobs.map((j) => j.id)).toContain(jobId);
    // I8 of its organisation's file: with imports, the bytes; without, the spec's 404.
    const file = job.body.upload_record.files[0]!;
    const download = `/v1/files?bucket=${encodeURIComponent(file.storage_upload_bucket)}&object_key=${encodeURIComponent(file.storage_upload_key)}`;
    const bytes = await fetch(`${host.url}${download}`, { headers: { authorization: `Bearer ${token}` } });
    expect(bytes.status).toBe(200);
    expect(await bytes.text()).toContain('P-1');
    expect((await api.get(download, (await partner()).token)).status).toBe(404);
    // Another organisation's job and task are not there for it.
    const foreignTasks = await importTasks(api, foreignAdmin, ['F-1']);
    expect((await api.get(`/v1/tasks/${foreignTasks[0]}`, token)).status).toBe(404);
    const foreignTask = await api.get<{ task: { import_job_id: string } }>(
      `/v1/tasks/${foreignTasks[0]}`,
      foreignAdmin,
    );
    expect((await api.get(`/v1/task-import-jobs/${foreignTask.body.task.import_job_id}`, token)).status).toBe(404);
    const mine = await api.get<{ tasks: { id: string }[] }>('/v1/tasks?per_page=1000', token);
    expect(mine.body.tasks.map((t) => t.id)).not.toContain(foreignTasks[0]);
  }, 240_000);
});

describe('a partner with plannings', () => {
  it('creates a planning, adds runsheets and drivers, starts a job, reads results and pairs, and assigns', async () => {
    const { token } = await partner(['plannings']);
    const key = { 'idempotency-key': `partner-run-${Date.now()}` };
    const created = await api.post<{ id: string; version_rev: string }>(
      '/v1/plannings',
      { name: 'Partner run' },
      token,
      key,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Idempotency holds for a partner as for a user: the same key and body answer the first planning again.
    const again = await api.post<{ id: string }>('/v1/plannings', { name: 'Partner run' }, token, key);
    expect(again.body.id).toBe(created.body.id);
    const id = created.body.id;
    const runsheets = [0, 1].map((i) => ({
      id: `RS-${i}`,
      name: `Runsheet ${i}`,
      tasks: [
        {
          id: `task-${i}`,
          total_item_count: 1,
          from_address: {
            street_address: `${i} Depot Rd`,
            city: 'Singapore',
            country: 'SG',
            latitude: 1.3 + i * 0.01,
            longitude: 103.8,
          },
        },
      ],
    }));
    expect((await api.post(`/v1/plannings/${id}/runsheets`, { runsheets }, token)).status).toBe(200);
    // A driver of another organisation is a 400, as for an OrgAdmin.
    const foreign = await api.post<Problem>(
      `/v1/plannings/${id}/drivers`,
      { drivers: [{ id: foreignDriver.id }] },
      token,
    );
    expect(foreign.status).toBe(400);
    const withDrivers = await api.post<{ version_rev: string; total_drivers: number }>(
      `/v1/plannings/${id}/drivers`,
      { drivers: drivers.map((d) => ({ id: d.id })) },
      token,
    );
    expect(withDrivers.body.total_drivers).toBe(2);
    const started = await api.post(
      `/v1/plannings/${id}/job`,
      { version_rev: withDrivers.body.version_rev, max_candidates: 2, offer_ttl_s: 600 },
      token,
    );
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const status = await until(
      () => api.get<{ current_status: string }>(`/v1/plannings/${id}/job/status`, token),
      (s) => !['queued', 'processing'].includes(s.body.current_status),
      30_000,
    );
    expect(status.body.current_status).toBe('completed');
    const result = await api.get<{ total_pairs_counted: number }>(`/v1/plannings/${id}/job/result`, token);
    expect(result.body).toMatchObject({ total_pairs_counted: 4, total_runsheets_counted: 2, total_drivers_counted: 2 });
    const pairs = await api.get<{ pair_records: { id: string }[] }>(`/v1/broadcast-plans/${id}/pairs`, token);
    expect(pairs.body.pair_records).toHaveLength(4);
    const pair = await api.get<{ pair_record: { id: string } }>(
      `/v1/broadcast-plans/${id}/pairs/${pairs.body.pair_records[0]!.id}`,
      token,
    );
    expect(pair.body.pair_record.id).toBe(pairs.body.pair_records[0]!.id);
    const assigned = await api.post<{ status: string; assigned_driver: { id: string } }>(
      `/v1/plannings/${id}/runsheets/RS-0/assign`,
      { driver_id: drivers[0]!.id },
      token,
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    expect(assigned.body).toMatchObject({ status: 'assigned', assigned_driver: { id: drivers[0]!.id } });
    // X22 (issue 38) is a planning reader's too: the runsheet with its tasks, each with its status.
    const one = await api.get<{ runsheet: { id: string; status: string; tasks: { status: string }[] } }>(
      `/v1/plannings/${id}/runsheets/RS-0`,
      token,
    );
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body.runsheet).toMatchObject({ id: 'RS-0', status: 'assigned' });
    expect(one.body.runsheet.tasks.every((t) => t.status === 'pending')).toBe(true);
    const listed = await api.get<{ runsheets: { id: string; status: string }[] }>(
      `/v1/plannings/${id}/runsheets`,
      token,
    );
    expect(listed.body.runsheets.find((r) => r.id === 'RS-0')?.status).toBe('assigned');
    // Another organisation's planning is not there for it, nor its planning for the other organisation.
    const theirs = await api.post<{ id: string }>('/v1/plannings', { name: 'Theirs' }, foreignAdmin);
    expect((await api.get(`/v1/plannings/${theirs.body.id}`, token)).status).toBe(404);
    expect((await api.get(`/v1/plannings/${id}`, foreignAdmin)).status).toBe(404);
    const mine = await api.get<{ plannings: { id: string }[] }>('/v1/plannings', token);
    expect(mine.body.plannings.map((p) => p.id)).toEqual([id]);
  }, 120_000);
});

describe('a partner with locations:read', () => {
  it('finds its organisation’s drivers (L2–L4), never another organisation’s', async () => {
    const { token } = await partner(['locations:read']);
    const nearest = await api.get<{ location: { driver_id?: string; user_id?: string } }>(
      '/v1/driver-locations/nearest?latitude=1.3&longitude=103.8',
      token,
    );
    expect(nearest.status, JSON.stringify(nearest.body)).toBe(200);
    // The foreign driver stands nearer (1.3001) than ours (1.3005): the partner sees its own.
    expect(JSON.stringify(nearest.body.location)).toContain(drivers[0]!.id);
    const within = await api.get<{ locations: unknown[] }>(
      '/v1/driver-locations?latitude=1.3&longitude=103.8&radius=5000',
      token,
    );
    const found = JSON.stringify(within.body.locations);
    expect(within.body.locations).toHaveLength(2);
    expect(found).toContain(drivers[1]!.id);
    expect(found).not.toContain(foreignDriver.id);
    expect((await api.get(`/v1/driver-locations/${drivers[1]!.id}`, token)).status).toBe(200);
    expect((await api.get(`/v1/driver-locations/${foreignDriver.id}`, token)).status).toBe(404);
  });
});

describe('/openapi.json', () => {
  it('lists each operation’s roles and scopes with its spec id, in the description a person reads at /docs', async () => {
    const doc = (await (await fetch(`${host.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const i4b = doc.paths['/v1/task-import-jobs']!['post']!;
    expect(i4b).toMatchObject({ 'x-spec-id': 'I4b', 'x-roles': ['OrgAdmin', 'Merchant'], 'x-scopes': ['imports'] });
    expect(i4b['description']).toContain('Access: OrgAdmin, Merchant or a partner scope imports');
    const a9 = doc.paths['/v1/partner/invitations']!['post']!;
    expect(a9).toMatchObject({ 'x-spec-id': 'A9', 'x-roles': [], 'x-scopes': ['users:invite'] });
    const a16 = doc.paths['/v1/admin/users/{userID}']!['get']!;
    expect(a16).toMatchObject({ 'x-roles': ['SysAdmin'], 'x-scopes': [] });
    expect(a16['description']).toContain('Access: SysAdmin. Spec A16.');
    const l3 = doc.paths['/v1/driver-locations/nearest']!['get']!;
    expect(l3['x-scopes']).toEqual(['locations:read']);
  });
});
