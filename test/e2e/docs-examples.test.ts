/**
 * Issue 24 item 2: every request example the document shows is one the service accepts. Each example is sent to a
 * fresh host, with a token of an allowed role and the ids of lib/openapi-docs/examples.ts replaced by records this file
 * creates first (a fresh record per operation, so no operation depends on another's effects), and must answer the
 * documented success status. Operations this file cannot send say why below; their examples must still validate.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { openApiDocument } from '../../lib/openapi.ts';
import { docsOf, EXAMPLE, type OperationDocs } from '../../lib/openapi-docs/index.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import type { RouteDef } from '../../shared/routes/types.ts';
import { routes } from '../../shared/routes.ts';
import {
  type Client,
  client,
  clientCredentialsToken,
  internalClientToken,
  invitedMember,
  loginAs,
} from '../support/http.ts';
import { putUpload } from '../support/imports.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

const TASKS = readFileSync('test/fixtures/tasks.csv');
const ALL = routes as readonly RouteDef[];

/**
 * Operations with inputs but no example yet (issue 24 item 2 is not finished for them): the list may only shrink.
 */
const NO_EXAMPLE_YET = '';
const WITHOUT_EXAMPLE: Readonly<Record<string, string>> = Object.fromEntries(
  NO_EXAMPLE_YET.split(' ')
    .filter(Boolean)
    .map((id) => [id, 'no example written yet']),
);

/**
 * Operations whose example is not sent here, each with the reason (their examples still validate). Every operation's
 * example is sent today: the list may only shrink, and an operation added to it must say exactly why it cannot be sent.
 */
const NOT_SENT: Readonly<Record<string, string>> = {
  X20:
    'Only the driver assigned the runsheet may report its tasks, and this file sends each example as a fresh user ' +
    'of an allowed role; test/e2e/execution.test.ts sends it as that driver.',
  X19:
    'Only the driver who accepted the pair may withdraw it, and this file sends each example as a fresh user of an ' +
    'allowed role; test/e2e/dispatch-day.test.ts and dispatch-actions.test.ts send it as that driver.',
};

/**
 * The planning job an operation's example needs, planted directly (test/e2e/planning.test.ts's way) since the local
 * worker takes a job P9 starts to completed at once: `queued` is a job whose queue message was never sent (no worker
 * takes it), `processing` one whose live lease another worker holds (nothing takes it over).
 */
const JOB_STATE: Readonly<Record<string, 'queued' | 'processing'>> = {
  P10: 'processing',
  P13: 'queued',
  P14: 'processing',
  P15: 'processing',
  P16: 'queued',
};

/**
 * The pair record an operation's example needs, in the completed planning (its job's driver, runsheet RS-1): `new` an
 * id no record has (R3 creates it), `created` one R3's example recorded, `broadcasted` one R5's example then moved.
 */
const PAIR_STATE: Readonly<Record<string, 'new' | 'created' | 'broadcasted'>> = {
  R3: 'new',
  R4: 'created',
  R5: 'created',
  R6: 'broadcasted',
  R7: 'broadcasted',
  R8: 'broadcasted',
};

/** The internal clients' roles: a worker client (X7) acting as itself (X5 client_credentials). */
const WORKER_ROLES: readonly Role[] = ['RunsheetBroadcastRecordWorker', 'RunsheetBroadcastPlanWorker'];

/** T2's external identity platform: a real RS256 key whose JWKS a local server serves (test/e2e/tokens.test.ts's way). */
const EXTERNAL = { issuer: 'https://id.example.test/', audience: 'dispatch-exchange' };
let jwks: Server | undefined;
let externalKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let host: RunningHost;
let api: Client;
let admin: string;
let org: string;
let merchantID: string;
let merchantToken: string;
let merchantEmail: string;

async function tokenFor(route: RouteDef): Promise<string | undefined> {
  if (route.access === 'public') return undefined;
  if (route.id === 'A24') return selfRegisteredMerchant();
  // The refresh token of T8's example is the shared Merchant's: the caller must be that user.
  if (route.id === 'T8') return merchantToken;
  const allowed: readonly Role[] = typeof route.access === 'string' ? ['Merchant'] : route.access;
  // An operation only a partner scope opens (A9): a partner client of the organisation, with the default scope.
  if (allowed.length === 0) return partnerToken();
  // X21 is open to a driver holding a runsheet under way (contract 4.8): a fresh driver given one by X16.
  if (route.id === 'X21') return driverWithRunsheet();
  // An organisation's own roles first (the example ids are that organisation's records), SysAdmin for admin paths.
  // The workers' own operations (R3–R8, P10, P13–P15) are sent as the worker that sends them in the service.
  const preference: Role[] = route.path.startsWith('/v1/admin/')
    ? ['SysAdmin']
    : [...WORKER_ROLES, 'Merchant', 'OrgAdmin', 'OrgTransporter', 'OrgDriver', 'SysAdmin'];
  const role = preference.find((r) => allowed.includes(r)) ?? allowed[0]!;
  if (role === 'SysAdmin') return admin;
  if (WORKER_ROLES.includes(role)) return workerToken(role);
  // A Partner is a partner client (T3, of the organisation) acting as itself (X5 client_credentials).
  if (role === 'Partner') return partnerToken();
  // A fresh user per operation: some examples change or end the caller's own account.
  return (await invitedMember(api, admin, role, ROLES[role], org)).token;
}

const merchant = () => merchantToken;

const workers = new Map<Role, Promise<string>>();

/** A worker client's bearer token: an internal client (X7) with the one role, through X5 client_credentials. */
function workerToken(role: Role): Promise<string> {
  if (!workers.has(role)) workers.set(role, internalClientToken(api, admin, `Docs ${role}`, [role]));
  return workers.get(role)!;
}

async function upload(): Promise<{ key: string; bucket: string }> {
  const presigned = await api.get<{ file: { url: string; storage_upload_key: string; storage_upload_bucket: string } }>(
    '/v1/task-import-jobs/upload-url?filename=tasks.csv',
    merchant(),
  );
  expect((await putUpload(presigned.body.file.url, TASKS)).status).toBe(200);
  return { key: presigned.body.file.storage_upload_key, bucket: presigned.body.file.storage_upload_bucket };
}

const WINDOW = {
  start_timezone: 'Asia/Singapore',
  start_time: '2026-12-01T08:00:00+08:00',
  end_timezone: 'Asia/Singapore',
  end_time: '2026-12-01T18:00:00+08:00',
  service_type: 'van_1.7m',
};

async function importJob(): Promise<string> {
  const { key } = await upload();
  // The upload is recorded by the bucket's trigger just after the PUT: retry until it is there.
  for (let attempt = 0; ; attempt++) {
    const created = await api.post<{ id: string }>(
      '/v1/task-import-jobs',
      { files: [{ storage_upload_key: key }], ...WINDOW },
      merchant(),
    );
    if (created.status === 201 || attempt === 40) {
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.id;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const EMPTY_RESULT = {
  file_import_results: [],
  total_tasks_counted: 0,
  total_tasks_imported: 0,
  total_tasks_rejected: 0,
  total_items_counted: 0,
  total_items_imported: 0,
  total_items_rejected: 0,
  errors: [],
};

/** What one operation's fixtures made, so that the ids of one example belong together. */
interface Made {
  jobID?: string;
  partner?: { id: string; client_key: string };
  registered?: { id: string; email: string };
  planning?: { id: string; version_rev: string };
  driverID?: string;
  platform?: { id: string; email: string };
  /** The bearer token the example is sent with. */
  caller?: string | undefined;
  /** The planning job (`jobID`) is planted in this state rather than started (JOB_STATE). */
  job?: 'queued' | 'processing';
  /** The pair record `pairID` names is made in this state rather than the completed job's (PAIR_STATE). */
  pair?: 'new' | 'created' | 'broadcasted';
}

/** A self-registered driver (A2), not confirmed. */
async function registered(made: Made, kind: 'driver' | 'merchant' = 'driver') {
  if (made.registered) return made.registered;
  const email = `self.${randomUUID()}@example.com`;
  const user = { email, password: EXAMPLE.password, name: 'Self Registered' };
  const created = await api.post(`/v1/auth/register-${kind}`, { user });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const found = await api.get<{ id?: string; user?: { id: string } }>(
    `/v1/admin/users/by-email/${encodeURIComponent(email)}`,
    admin,
  );
  made.registered = { id: (found.body.user?.id ?? found.body.id)!, email };
  return made.registered;
}

/** A confirmed self-registered merchant's bearer token (A24 is theirs alone). */
async function selfRegisteredMerchant(): Promise<string> {
  const made: Made = {};
  const { email } = await registered(made, 'merchant');
  expect((await api.post('/v1/auth/security-code', { user: { email } })).status).toBe(202);
  const { security_code } = await mailTo(email, 'security_code');
  expect((await api.post('/v1/auth/verify-security-code', { user: { email, security_code } })).status).toBe(200);
  return (await loginAs(api, email, EXAMPLE.password)).bearer_token;
}

async function partner(made: Made) {
  if (made.partner) return made.partner;
  const body = { name: 'Docs partner', webhook_url: 'https://hooks.example.com/docs', org_id: org };
  const created = await api.post<{ id: string; client_key: string }>('/v1/admin/partner-authorizations', body, admin);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  made.partner = created.body;
  return made.partner;
}

async function internalClient() {
  const body = { name: 'Docs worker', roles: ['ImportWorker'] };
  const created = await api.post<{ id: string; client_key: string; secret_key: string }>(
    '/v1/admin/clients',
    body,
    admin,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** A Partner bearer token: a fresh partner authorization of the organisation, through X5 client_credentials. */
async function partnerToken(): Promise<string> {
  const body = { name: 'Docs partner', webhook_url: 'https://hooks.example.com/docs', org_id: org };
  const created = await api.post<{ client_key: string; secret_key: string }>(
    '/v1/admin/partner-authorizations',
    body,
    admin,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return clientCredentialsToken(api, created.body.client_key, created.body.secret_key);
}

/** A platform organisation and one of its users (T10). */
async function platform(made: Made) {
  if (made.platform) return made.platform;
  const created = await api.post<{ id: string }>(
    '/v1/admin/organisations',
    { name: 'Docs platform', kind: 'platform' },
    admin,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { email } = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, created.body.id);
  made.platform = { id: created.body.id, email };
  return made.platform;
}

/**
 * Headers an operation needs beyond its example: X5's HTTP Basic client credentials, T2's external identity token (a
 * JWT the external platform signed for the shared Merchant's address).
 */
async function headersFor(route: RouteDef): Promise<Record<string, string>> {
  if (route.id === 'T2') {
    const external = await new SignJWT({ email: merchantEmail, email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'docs-issuer-key' })
      .setIssuer(EXTERNAL.issuer)
      .setAudience(EXTERNAL.audience)
      .setSubject('docs-external-user')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(externalKey);
    return { authorization: `Bearer ${external}` };
  }
  if (route.id !== 'X5') return {};
  const { client_key, secret_key } = await internalClient();
  return { authorization: `Basic ${Buffer.from(`${client_key}:${secret_key}`).toString('base64')}` };
}

/** The data of the newest local mail to `email` that carries `key`. */
async function mailTo(email: string, key = 'invitation_token'): Promise<Record<string, string>> {
  const outbox = await api.get<{ messages: { data: Record<string, string> }[] }>(
    `/_local/outbox?to=${encodeURIComponent(email)}`,
  );
  const found = outbox.body.messages.filter((m) => m.data[key]).at(-1);
  expect(found, `a mail to ${email} with ${key}`).toBeDefined();
  return found!.data;
}

async function driver(): Promise<string> {
  const made = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  const fix = { latitude: 1.2765, longitude: 103.846, client_time_utc: new Date().toISOString() };
  expect((await api.put('/v1/driver/location', fix, made.token)).status).toBe(200);
  return made.id;
}

/** A fresh OrgDriver of the organisation holding runsheet RS-1 of a planning of its own (X16), its token. */
async function driverWithRunsheet(): Promise<string> {
  const planner = (await tokenFor(ALL.find((r) => r.id === 'P2')!))!;
  const id = (await api.post<{ id: string }>('/v1/plannings', { name: 'Docs proofs' }, planner)).body.id;
  const runsheets = [{ id: 'RS-1', tasks: [{ id: 'T-1', from_address: { city: 'Singapore' } }] }];
  expect((await api.post(`/v1/plannings/${id}/runsheets`, { runsheets }, planner)).status).toBe(200);
  const held = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
  expect((await api.post(`/v1/plannings/${id}/drivers`, { drivers: [{ id: held.id }] }, planner)).status).toBe(200);
  const assigned = await api.post(`/v1/plannings/${id}/runsheets/RS-1/assign`, { driver_id: held.id }, planner);
  expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
  return held.token;
}

/** A planning with runsheet RS-1 and one located driver. */
async function planning(made: Made) {
  if (made.planning) return made.planning;
  const planner = (await tokenFor(ALL.find((r) => r.id === 'P2')!))!;
  const id = (await api.post<{ id: string }>('/v1/plannings', { name: 'Docs planning' }, planner)).body.id;
  const runsheet = {
    id: 'RS-1',
    tasks: [{ id: 'T-1', from_address: { street_address: '1 Depot Rd', latitude: 1.276, longitude: 103.846 } }],
  };
  expect((await api.post(`/v1/plannings/${id}/runsheets`, { runsheets: [runsheet] }, planner)).status).toBe(200);
  made.driverID = await driver();
  const added = await api.post<{ version_rev: string }>(
    `/v1/plannings/${id}/drivers`,
    { drivers: [{ id: made.driverID }] },
    planner,
  );
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  made.planning = { id, version_rev: added.body.version_rev };
  return made.planning;
}

/** Starts the made planning's job (P9), its job id. */
async function started(made: Made): Promise<string> {
  if (made.jobID) return made.jobID;
  const { id, version_rev } = await planning(made);
  const planner = (await tokenFor(ALL.find((r) => r.id === 'P9')!))!;
  const job = await api.post<{ job?: { id: string }; id?: string }>(
    `/v1/plannings/${id}/job`,
    { version_rev },
    planner,
  );
  expect(job.status, JSON.stringify(job.body)).toBe(202);
  made.jobID = (await api.get<{ job: { id: string } }>(`/v1/plannings/${id}`, planner)).body.job.id;
  return made.jobID;
}

/** Plants the made planning's job in the state `made.job` names (JOB_STATE), its job id. */
async function planted(made: Made): Promise<string> {
  if (made.jobID) return made.jobID;
  const { id } = await planning(made);
  const { findPlanning } = await import('../../shared/planning/planning-records.ts');
  const { changePlanning } = await import('../../shared/planning/plannings.ts');
  const now = new Date().toISOString();
  const jobID = randomUUID();
  const processing = made.job === 'processing';
  await changePlanning((await findPlanning(id))!, undefined, {
    job: {
      id: jobID,
      current_status: made.job!,
      statuses: [
        { status: 'queued', set_at_utc: now },
        ...(processing ? [{ status: 'processing' as const, set_at_utc: now }] : []),
      ],
      status_updated_at: now,
      max_candidates: 3,
      offer_ttl_s: 600,
      // Another worker runs it, its lease good for the whole test: no takeover.
      ...(processing ? { lease_until: Date.now() + 3_600_000, lease_owner: 'another-worker', attempts: 1 } : {}),
    },
  });
  made.jobID = jobID;
  return jobID;
}

/** Sends operation `id`'s own example with `ids` in place of the example ids it names, as its worker would. */
async function sendAs(id: string, ids: Partial<Record<keyof typeof EXAMPLE, string>>) {
  const route = ALL.find((r) => r.id === id)!;
  let text = JSON.stringify(docsOf(id)!.example);
  for (const [name, real] of Object.entries(ids)) text = text.split(EXAMPLE[name as keyof typeof EXAMPLE]).join(real);
  const example = JSON.parse(text) as NonNullable<OperationDocs['example']>;
  const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    encodeURIComponent(String(example.params?.[name])),
  );
  const response = await api.call(route.method, path, { token: await tokenFor(route), body: example.body });
  expect(response.status, `${id}: ${JSON.stringify(response.body)}`).toBe(route.status);
}

/**
 * A pair record of the completed planning in the state `made.pair` names (PAIR_STATE), its id: created with R3's
 * example, broadcast with R5's (their happened_at_utc come before the other examples').
 */
async function pairIn(made: Made): Promise<string> {
  const completedID = await FIXTURES.completedID(made);
  const pairID = randomUUID();
  if (made.pair === 'new') return pairID;
  const ids = { pairID, completedID, driverID: made.driverID! };
  await sendAs('R3', ids);
  if (made.pair === 'broadcasted') await sendAs('R5', ids);
  return pairID;
}

/** A task the import worker imported from test/fixtures/tasks.csv (I1, I4b, I6, then I5's status), found with X10. */
async function importedTask(): Promise<string> {
  const id = await importJob();
  expect((await api.post(`/v1/task-import-jobs/${id}/start`, {}, merchant())).status).toBe(202);
  let status = '';
  for (let attempt = 0; attempt < 1200 && !['completed', 'failed'].includes(status); attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, 50));
    status = (await api.get<{ import_status: string }>(`/v1/task-import-jobs/${id}/status`, merchant())).body
      .import_status;
  }
  expect(status).toBe('completed');
  const tasks = await api.get<{ tasks: { id: string }[] }>(`/v1/tasks?import_job_id=${id}`, merchant());
  expect(tasks.body.tasks[0], JSON.stringify(tasks.body)).toBeDefined();
  return tasks.body.tasks[0]!.id;
}

/**
 * Makes the record each example id stands for (fresh ones per operation), in this order: an id that holds another
 * (the upload key holds the organisation id) comes before it.
 */
const FIXTURES: Record<keyof typeof EXAMPLE, (made: Made) => Promise<string>> = {
  uploadKey: async () => (await upload()).key,
  email: async () => (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).email,
  platformEmail: async (made) => (await platform(made)).email,
  platformID: async (made) => (await platform(made)).id,
  profileRev: async (made) => {
    const me = await api.get<{ user: { driver_profile?: { version_rev: string } } }>('/v1/me', made.caller);
    expect(me.body.user.driver_profile, JSON.stringify(me.body)).toBeDefined();
    return me.body.user.driver_profile!.version_rev;
  },
  password: async () => EXAMPLE.password,
  newEmail: async () => `new.${randomUUID()}@example.com`,
  refreshToken: async () => (await loginAs(api, merchantEmail, EXAMPLE.password)).refresh_token,
  invitationToken: async () => {
    const email = `invited.${randomUUID()}@example.com`;
    const invitation = { user: { email, org_id: org, role_id: ROLES.OrgDriver } };
    expect((await api.post('/v1/admin/invitations', invitation, admin)).status).toBe(201);
    return (await mailTo(email))['invitation_token']!;
  },
  resetToken: async () => {
    const { email } = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    expect((await api.post('/v1/auth/password/forgot', { user: { email } })).status).toBe(202);
    return (await mailTo(email, 'reset_password_token'))['reset_password_token']!;
  },
  orgDriverRoleID: async () => ROLES.OrgDriver,
  partnerID: async (made) => (await partner(made)).id,
  clientKey: async (made) => (await partner(made)).client_key,
  authCode: async (made) => {
    const { client_key } = await partner(made);
    const { refresh_token, bearer_token } = await loginAs(api, merchantEmail, EXAMPLE.password);
    const body = { refresh_token, client_auth: { key: client_key, name: 'Docs partner' } };
    const code = await api.post<{ auth_code: string }>('/v1/auth/auth-codes', body, bearer_token);
    expect(code.status).toBe(201);
    return code.body.auth_code;
  },
  clientID: async () => (await internalClient()).id,
  pairID: async (made) => {
    if (made.pair) return pairIn(made);
    const plan = await FIXTURES.completedID(made);
    const pairs = await api.get<{ pair_records: { id: string }[] }>(`/v1/broadcast-plans/${plan}/pairs`, admin);
    const first = pairs.body.pair_records[0];
    expect(first, JSON.stringify(pairs.body)).toBeDefined();
    return first!.id;
  },
  unconfirmedEmail: async (made) => (await registered(made)).email,
  unconfirmedUserID: async (made) => (await registered(made)).id,
  securityCode: async (made) => {
    const { email } = await registered(made);
    expect((await api.post('/v1/auth/security-code', { user: { email } })).status).toBe(202);
    return (await mailTo(email, 'security_code'))['security_code']!;
  },
  orgID: async () => org,
  userID: async () => (await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org)).id,
  importJobID: importJob,
  importedJobID: async () => {
    const id = await importJob();
    expect((await api.post(`/v1/task-import-jobs/${id}/result`, EMPTY_RESULT, admin)).status).toBe(201);
    return id;
  },
  bucket: async () => (await upload()).bucket,
  taskID: importedTask,
  trackingToken: async () => {
    const made = await api.post<{ tracking: { url: string } }>(`/v1/tasks/${await importedTask()}/tracking`, {}, admin);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.tracking.url.split('/track/')[1]!;
  },
  notificationID: async () => {
    const entry = { event_type: 'docs.example', event_data: { user_id: merchantID, title: 'An example' } };
    expect((await api.post('/v1/notifications', entry, admin)).status).toBe(201);
    const list = await api.get<{ notifications: { id: string }[] }>('/v1/notifications?per_page=1', merchant());
    return list.body.notifications[0]!.id;
  },
  planningID: async (made) => (await planning(made)).id,
  routeBuildID: async (made) => {
    const { id, version_rev } = await planning(made);
    const vehicle = {
      id: 'van',
      start: { latitude: 1.3343, longitude: 103.8563 },
      shift_start_utc: '2026-11-22T00:00:00Z',
      shift_end_utc: '2026-11-22T10:00:00Z',
    };
    const body = { task_ids: [await importedTask()], vehicles: [vehicle], time_limit_s: 1, dry_run: true, version_rev };
    const build = await api.post<{ route_build: { id: string } }>(`/v1/plannings/${id}/routes`, body, admin);
    expect(build.status, JSON.stringify(build.body)).toBe(202);
    // Completed before the example runs: X31's applies a completed dry run (a second of solving).
    for (let attempt = 0; attempt < 600; attempt++) {
      const read = await api.get<{ route_build: { status: string } }>(
        `/v1/plannings/${id}/routes/${build.body.route_build.id}`,
        admin,
      );
      if (read.body.route_build.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return build.body.route_build.id;
  },
  versionRev: async (made) => (await planning(made)).version_rev,
  driverID: async (made) => {
    await planning(made);
    return made.driverID!;
  },
  newDriverID: driver,
  plannedID: async (made) => {
    await (made.job ? planted(made) : started(made));
    return made.planning!.id;
  },
  planningJobID: (made) => (made.job ? planted(made) : started(made)),
  completedID: async (made) => {
    await started(made);
    const planner = (await tokenFor(ALL.find((r) => r.id === 'P12')!))!;
    for (let attempt = 0; attempt < 1200; attempt++) {
      const status = await api.get<{ current_status: string }>(
        `/v1/plannings/${made.planning!.id}/job/status`,
        planner,
      );
      if (status.body.current_status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return made.planning!.id;
  },
};

/** The example with every example id replaced by a real record's. */
async function filled(example: NonNullable<OperationDocs['example']>, route: RouteDef, caller?: string) {
  let text = JSON.stringify(example);
  const made: Made = {
    caller,
    ...(JOB_STATE[route.id] ? { job: JOB_STATE[route.id] } : {}),
    ...(PAIR_STATE[route.id] ? { pair: PAIR_STATE[route.id] } : {}),
  };
  for (const name of Object.keys(FIXTURES) as (keyof typeof EXAMPLE)[]) {
    if (!text.includes(EXAMPLE[name])) continue;
    const real = await FIXTURES[name](made);
    text = text.split(EXAMPLE[name]).join(real);
  }
  return JSON.parse(text) as NonNullable<OperationDocs['example']>;
}

const hasInputs = (route: RouteDef) =>
  Boolean(route.request?.body || route.request?.params || route.request?.query || route.documented?.query);

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  externalKey = privateKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'docs-issuer-key', alg: 'RS256', use: 'sig' };
  jwks = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((done) => jwks!.listen(0, '127.0.0.1', done));
  // This file's host trusts that platform (T2), as a deployment configured with EXTERNAL_* does.
  Object.assign(process.env, {
    EXTERNAL_ISSUER: EXTERNAL.issuer,
    EXTERNAL_AUDIENCE: EXTERNAL.audience,
    EXTERNAL_JWKS_URL: `http://localhost:${(jwks.address() as AddressInfo).port}/jwks.json`,
  });
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  org = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Docs shop', kind: 'merchant' }, admin)).body
    .id;
  const merchant = await invitedMember(api, admin, 'Merchant', ROLES.Merchant, org);
  merchantToken = merchant.token;
  merchantEmail = merchant.email;
  merchantID = merchant.id;
});
afterAll(async () => {
  await host?.stop();
  jwks?.close();
});

describe('the request examples of the OpenAPI document', () => {
  it('every operation with inputs has an example, or is listed with the reason', () => {
    const missing = ALL.filter((r) => hasInputs(r) && !docsOf(r.id)?.example && !WITHOUT_EXAMPLE[r.id]).map(
      (r) => r.id,
    );
    expect(missing).toEqual([]);
    // The list shrinks as examples are written: an operation with an example must leave it.
    expect(ALL.filter((r) => docsOf(r.id)?.example && WITHOUT_EXAMPLE[r.id]).map((r) => r.id)).toEqual([]);
  });

  it('the document shows each example where Swagger UI reads it', () => {
    const document = openApiDocument() as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    for (const route of ALL.filter((r) => docsOf(r.id)?.example)) {
      const operation = document.paths[route.path]![route.method.toLowerCase()]!;
      const example = docsOf(route.id)!.example!;
      if (example.body !== undefined) {
        const content = (operation['requestBody'] as { content: Record<string, { example?: unknown }> }).content;
        expect(content['application/json']!.example, route.id).toEqual(example.body);
      }
      const parameters = operation['parameters'] as { name: string; example?: string }[];
      for (const [name, value] of Object.entries({ ...example.params, ...example.query, ...example.headers })) {
        expect(parameters.find((p) => p.name === name)?.example, `${route.id} ${name}`).toBe(value);
      }
    }
  });

  it('every example validates against its operation’s request schemas', () => {
    for (const route of ALL.filter((r) => docsOf(r.id)?.example)) {
      const { body, params, query, headers } = docsOf(route.id)!.example!;
      if (headers) expect(v.safeParse(route.request!.headers!, headers).issues, route.id).toBeUndefined();
      if (body !== undefined) expect(v.safeParse(route.request!.body!, body).issues, route.id).toBeUndefined();
      if (params) expect(v.safeParse(route.request!.params!, params).issues, route.id).toBeUndefined();
      const querySchema = route.request?.query ?? route.documented?.query;
      if (query) expect(v.safeParse(querySchema!, query).issues, route.id).toBeUndefined();
    }
  });

  const sent = ALL.filter(
    (r) => !NOT_SENT[r.id] && (docsOf(r.id)?.example || !hasInputs(r)) && !docsOf(r.id)?.multipart,
  );
  it.each(sent.map((r) => [r.id, r] as const))(
    '%s: the example answers the documented status',
    async (_id, route) => {
      const token = await tokenFor(route);
      const example = await filled(docsOf(route.id)?.example ?? {}, route, token);
      const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
        encodeURIComponent(String(example.params?.[name])),
      );
      const query = example.query ? `?${new URLSearchParams(example.query)}` : '';
      const response = await api.call(route.method, `${path}${query}`, {
        headers: { ...(await headersFor(route)), ...example.headers },
        ...(token ? { token } : {}),
        ...(example.body !== undefined ? { body: example.body } : {}),
      });
      expect(response.status, JSON.stringify(response.body)).toBe(route.status);
      // T2 answers 200 for an address no account has too: the shared Merchant's must get a token.
      if (route.id === 'T2') expect((response.body as { bearer_token: string }).bearer_token).not.toBe('');
      // The planning fixtures wait for the local worker to finish a job: more than the default 30 s on a busy machine.
    },
    120_000,
  );

  // I3: the documented multipart body, a tasks file in `files` (and the organisation where the operation needs one).
  const multipart = ALL.filter((r) => docsOf(r.id)?.multipart);
  it.each(multipart.map((r) => [r.id, r] as const))(
    '%s: the multipart body answers the documented status',
    async (_id, route) => {
      const docs = docsOf(route.id)!;
      const form = new FormData();
      form.append(docs.multipart!, new Blob([TASKS], { type: 'text/csv' }), 'tasks.csv');
      const values: Readonly<Record<string, string>> = { org_id: org };
      for (const name of Object.keys(docs.multipartFields ?? {})) form.append(name, values[name]!);
      const token = await tokenFor(route);
      const response = await api.upload(route.path, form, token);
      expect(response.status, JSON.stringify(response.body)).toBe(route.status);
    },
    120_000,
  );

  // The examples ran in table order, so a list was read before the operations after it changed its records (X7's
  // list before X7.revoke revoked a client: issue 33 item 11). Every list is read again now, when this file's records
  // are in every state its examples took them to, and each answer is checked against its closed schema by the client.
  const lists = ALL.filter((r) => r.method === 'GET' && !r.request?.params && !r.documented && !NOT_SENT[r.id]);
  it('after every example, each list answers again within its closed schema', async () => {
    expect(lists.map((r) => r.id)).toContain('X7.list');
    for (const route of lists) {
      const token = await tokenFor(route);
      const example = await filled(docsOf(route.id)?.example ?? {}, route, token);
      const query = example.query ? `?${new URLSearchParams(example.query)}` : '';
      const response = await api.call('GET', `${route.path}${query}`, {
        headers: { ...(await headersFor(route)), ...example.headers },
        ...(token ? { token } : {}),
      });
      expect(response.status, `${route.id} ${JSON.stringify(response.body)}`).toBe(route.status);
    }
  }, 300_000);
});
