/**
 * Idempotency-Key safety (docs/idempotency.md), measured through the local host:
 * - every public operation (A1, A2, A3, A4, A10, A11, T1, T2, T10, X1, X5, X8) replayed under the same key without its
 *   credential, or with another one, never answers for the credential it was not given (security issue 28, item 1);
 *   this is the replay part of the fuzzing suite (test/e2e/fuzz.test.ts points here);
 * - the same JSON with other member order or whitespace is the same body; a JSON body with a byte-order mark is a
 *   400 malformed_json that names it (defects issue 23, item 8);
 * - a create whose answer was lost on every attempt, retried with the same key, leaves exactly one record
 *   (defects issue 23, item 7): DynamoDB behind the fault proxy, whose `reset` applies a write and loses its answer.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../lib/local/emulators.ts';
import { type RunningHost, startLocal } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { type ApiResponse, type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { IMPORT_WINDOW, putUpload } from '../support/imports.ts';
import { ADMIN } from '../support/local.ts';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
const PASSWORD = 'a-good-long-password';
const unique = (name: string) => `${name}-${randomBytes(4).toString('hex')}@example.com`;
const newKey = () => `key-${randomBytes(8).toString('hex')}`;
const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

let host: RunningHost;
let proxy: FaultProxy;
let api: Client;
let admin: string;
const issuer = { server: undefined as Server | undefined, key: undefined as SigningKey | undefined };

type Outbox = { messages: { kind: string; data: Record<string, string> }[] };
const lastMail = async (to: string, kind: string) => {
  const outbox = await api.get<Outbox>(`/_local/outbox?to=${encodeURIComponent(to)}`);
  const found = outbox.body.messages.find((m) => m.kind === kind);
  if (!found) throw new Error(`no ${kind} mail for ${to}`);
  return found.data;
};

const keyed = (key: string, headers: Record<string, string> = {}) => ({ 'idempotency-key': key, ...headers });

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  issuer.key = privateKey as SigningKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'issuer-key-1', alg: 'RS256', use: 'sig' };
  issuer.server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((done) => issuer.server!.listen(0, '127.0.0.1', done));
  Object.assign(process.env, {
    EXTERNAL_ISSUER: 'https://id.example.test/',
    EXTERNAL_AUDIENCE: 'dispatch-exchange',
    EXTERNAL_JWKS_URL: `http://localhost:${(issuer.server!.address() as AddressInfo).port}/jwks.json`,
    TOKEN_GENERATION_CACHE_MS: '0',
    IDEMPOTENCY_IN_PROGRESS_MS: '3000',
  });
  const endpoints = inject('endpoints');
  proxy = await startFaultProxy(endpoints.dynamodb, 'dynamodb');
  host = await startLocal({
    port: 0,
    dataDir: join(inject('dataDir'), `idem-${randomBytes(4).toString('hex')}`),
    fresh: false,
    persistent: false,
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    tablePrefix: `i${randomBytes(4).toString('hex')}-`,
    endpoints: { dynamodb: proxy.url },
  });
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
}, 60_000);

afterAll(async () => {
  await proxy?.set('pass');
  await host?.stop();
  await proxy?.close();
  issuer.server?.close();
});

/** No answer to `replay` may carry a credential of `first`'s answer. */
function expectNoCredentialOf(first: ApiResponse, replay: ApiResponse, what: string) {
  const issued = ['bearer_token', 'refresh_token', 'session_id']
    .map((name) => (first.body as Record<string, unknown>)[name])
    .filter((value): value is string => typeof value === 'string' && value !== '');
  for (const value of issued) expect(JSON.stringify(replay.body), what).not.toContain(value);
}

/** A confirmed self-registered driver (A2, A3, X8). */
async function confirmedDriver() {
  const email = unique('driver');
  await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Dee Driver' } });
  await api.post('/v1/auth/security-code', { user: { email } });
  const code = (await lastMail(email, 'security_code'))['security_code']!;
  expect((await api.post('/v1/auth/verify-security-code', { user: { email, security_code: code } })).status).toBe(200);
  return email;
}

/** An OrgDriver invited into a new organisation: the address and the invitation token from the local outbox. */
async function invitedDriver(orgName: string, name: string) {
  const orgId = await newOrganisation(api, admin, orgName);
  const invitee = unique(name);
  await api.post('/v1/admin/invitations', { user: { email: invitee, org_id: orgId, role_id: ROLES.OrgDriver } }, admin);
  return { invitee, invitation: (await lastMail(invitee, 'invitation'))['invitation_token']! };
}

describe('sec-idem: replays of public operations without (or with other) credentials', () => {
  it('X5: a client-credentials token is never replayed without the client’s Basic credentials', async () => {
    const orgId = await newOrganisation(api, admin, 'Partner org', 'merchant');
    const partner = await api.post<{ client_key: string; secret_key: string }>(
      '/v1/admin/partner-authorizations',
      { name: 'Replay Partner', webhook_url: 'https://hooks.replay.example/dispatch', org_id: orgId },
      admin,
    );
    expect(partner.status).toBe(201);
    const key = newKey();
    const token = (authorization?: string) =>
      api.call<{ bearer_token: string }>('POST', '/v1/auth/token', {
        headers: keyed(key, {
          ...(authorization ? { authorization } : {}),
          'content-type': 'application/x-www-form-urlencoded',
        }),
        rawBody: 'grant_type=client_credentials',
      });
    const first = await token(basic(partner.body.client_key, partner.body.secret_key));
    expect(first.status).toBe(200);
    for (const [what, authorization] of [
      ['no Authorization', undefined],
      ['a wrong secret', basic(partner.body.client_key, 'sk_not-the-secret')],
      ['another client', basic('ck_someone-else', partner.body.secret_key)],
    ] as const) {
      const replay = await token(authorization);
      expect(replay.status, what).toBe(401);
      expectNoCredentialOf(first, replay, what);
    }
  });

  it('T2: an exchanged token is never replayed without the external token, or for another one', async () => {
    const external = (email: string) =>
      new SignJWT({ email, email_verified: true })
        .setProtectedHeader({ alg: 'RS256', kid: 'issuer-key-1' })
        .setIssuer('https://id.example.test/')
        .setAudience('dispatch-exchange')
        .setSubject(`ext-${email}`)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(issuer.key!);
    const key = newKey();
    const exchange = (authorization?: string) =>
      api.call<{ bearer_token: string }>('POST', '/v1/auth/exchange', {
        headers: keyed(key, authorization ? { authorization } : {}),
      });
    const first = await exchange(`Bearer ${await external(ADMIN.email)}`);
    expect(first.status).toBe(200);
    expect(first.body.bearer_token).toBeTruthy();
    const bare = await exchange();
    expect(bare.status).toBe(401);
    expectNoCredentialOf(first, bare, 'no Authorization');
    const stranger = await exchange(`Bearer ${await external('stranger@example.com')}`);
    expect(stranger.body).toMatchObject({ bearer_token: '' });
    expectNoCredentialOf(first, stranger, 'another external token');
    expect((await exchange('Bearer not-a-jwt')).status).toBe(401);
  });

  it('T1: a replayed old refresh token meets reuse detection, not the stored new pair', async () => {
    const email = await confirmedDriver();
    const session = await loginAs(api, email, PASSWORD);
    const key = newKey();
    const refresh = (refreshToken: string) =>
      api.post<{ bearer_token: string; refresh_token: string }>(
        '/v1/auth/refresh',
        { refresh_token: refreshToken },
        undefined,
        keyed(key),
      );
    const rotated = await refresh(session.refresh_token);
    expect(rotated.status).toBe(200);
    const replay = await refresh(session.refresh_token);
    expect(replay.status).toBe(401);
    expectNoCredentialOf(rotated, replay, 'the old refresh token');
    // Reuse revoked the family: the pair the first call handed out is dead too.
    expect((await api.post('/v1/auth/refresh', { refresh_token: rotated.body.refresh_token })).status).toBe(401);
  });

  it('A1: a login is judged on the password it carries, whatever the key', async () => {
    const email = await confirmedDriver();
    const key = newKey();
    const login = (password: string) =>
      api.post<{ bearer_token: string }>('/v1/auth/login', { user: { email, password } }, undefined, keyed(key));
    const first = await login(PASSWORD);
    expect(first.status).toBe(200);
    const wrong = await login('not-the-password-at-all');
    expect(wrong.status).toBe(401);
    expectNoCredentialOf(first, wrong, 'a wrong password');
    const again = await login(PASSWORD);
    expect(again.status).toBe(200);
    expect(again.body.bearer_token).not.toBe(first.body.bearer_token);
  });

  it('T10: a platform session is never replayed for another platform, another password or no header', async () => {
    const platform = await newOrganisation(api, admin, 'Replay platform', 'platform');
    const other = await newOrganisation(api, admin, 'Other platform', 'platform');
    const member = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, platform);
    const key = newKey();
    const session = (platformId: string | undefined, password = member.password) =>
      api.call<{ session_id: string }>('POST', '/v1/auth/platform-sessions', {
        headers: keyed(key, platformId ? { 'x-platform-id': platformId } : {}),
        body: { user: { email: member.email, password } },
      });
    const first = await session(platform);
    expect(first.status).toBe(201);
    const cases = [
      ['another platform', await session(other), 403],
      ['no header', await session(undefined), 400],
      ['a wrong password', await session(platform, 'not-the-password-at-all'), 401],
    ] as const;
    for (const [what, replay, status] of cases) {
      expect(replay.status, what).toBe(status);
      expectNoCredentialOf(first, replay, what);
    }
  });

  it('A4, A11, X8: a replay with another single-use secret (or none) is judged on that secret', async () => {
    // A4: the invitation token is the credential.
    const { invitation } = await invitedDriver('Invite org', 'invitee');
    const acceptKey = newKey();
    const accept = (token: string | undefined) =>
      api.post(
        '/v1/auth/accept-invitation',
        { user: { name: 'In Vitee', password: PASSWORD, ...(token === undefined ? {} : { invitation_token: token }) } },
        undefined,
        keyed(acceptKey),
      );
    expect((await accept(invitation)).status).toBe(200);
    expect((await accept('not-the-invitation-token')).status).not.toBe(200);
    expect((await accept(undefined)).status).toBe(400);

    // A11: the reset token is the credential.
    const email = await confirmedDriver();
    await api.post('/v1/auth/password/forgot', { user: { email } });
    const reset = (await lastMail(email, 'password_reset'))['reset_password_token']!;
    const resetKey = newKey();
    const resetWith = (token: string | undefined) =>
      api.post(
        '/v1/auth/password/reset',
        {
          user: {
            password: 'another-good-long-password',
            ...(token === undefined ? {} : { reset_password_token: token }),
          },
        },
        undefined,
        keyed(resetKey),
      );
    expect((await resetWith(reset)).status).toBe(200);
    expect((await resetWith('not-the-reset-token')).status).toBe(400);
    expect((await resetWith(undefined)).status).toBe(400);

    // X8: the security code is the credential.
    const driver = unique('code');
    await api.post('/v1/auth/register-driver', { user: { email: driver, password: PASSWORD, name: 'Co De' } });
    await api.post('/v1/auth/security-code', { user: { email: driver } });
    const code = (await lastMail(driver, 'security_code'))['security_code']!;
    const verifyKey = newKey();
    const verify = (securityCode: string) =>
      api.post(
        '/v1/auth/verify-security-code',
        { user: { email: driver, security_code: securityCode } },
        undefined,
        keyed(verifyKey),
      );
    expect((await verify(code)).status).toBe(200);
    expect((await verify(code === '000000' ? '111111' : '000000')).status).not.toBe(200);
  });

  it('A2, X1, A3, A10: a replay without the password (or with another) is no replay; the rest carry no credential', async () => {
    for (const path of ['/v1/auth/register-driver', '/v1/auth/register-merchant']) {
      const email = unique('register');
      const key = newKey();
      const register = (password: string) =>
        api.post(path, { user: { email, password, name: 'Reg Ister' } }, undefined, keyed(key));
      const first = await register(PASSWORD);
      expect(first.status, path).toBe(201);
      const replay = await register('another-good-long-password');
      expect(replay.status, path).not.toBe(201);
      expect(replay.body, path).not.toEqual(first.body);
    }
    // A3 and A10 take no credential (an email only); the same request replays the same 202, another body is a 409.
    for (const path of ['/v1/auth/security-code', '/v1/auth/password/forgot']) {
      const key = newKey();
      const send = (email: string) => api.post(path, { user: { email } }, undefined, keyed(key));
      const email = unique('nocred');
      expect((await send(email)).status, path).toBe(202);
      expect((await send(email)).status, path).toBe(202);
      expect((await send(unique('other'))).body, path).toMatchObject({ status: 409, code: 'idempotency_key_reused' });
    }
  });
});

describe('sec-idem: the same JSON is the same body', () => {
  it('replays the same JSON with another member order and whitespace; another value is still a 409', async () => {
    const key = newKey();
    const send = (rawBody: string) =>
      api.call<{ id: string }>('POST', '/v1/admin/organisations', {
        token: admin,
        headers: keyed(key, { 'content-type': 'application/json' }),
        rawBody,
      });
    const first = await send('{"name":"Same JSON","kind":"merchant"}');
    expect(first.status).toBe(201);
    const reordered = await send('{\n  "kind" : "merchant",\n\t"name":   "Same JSON"\n}\n');
    expect(reordered.status).toBe(201);
    expect(reordered.body.id).toBe(first.body.id);
    const other = await send('{"kind":"merchant","name":"Other JSON"}');
    expect(other.body).toMatchObject({ status: 409, code: 'idempotency_key_reused' });
  });

  it('answers a body that starts with a byte-order mark with a 400 malformed_json that names it', async () => {
    const response = await api.call<{ detail: string }>('POST', '/v1/admin/organisations', {
      token: admin,
      headers: { 'content-type': 'application/json' },
      rawBody: '\uFEFF{"name":"BOM","kind":"merchant"}',
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'malformed_json' });
    expect(response.body.detail).toMatch(/byte-order mark/);
  });
});

describe('sec-idem: a create whose answer was lost on every attempt, retried with the same key', () => {
  /** Every attempt of the create's PutItem is applied and its answer lost (the first PutItem is the key's record). */
  async function loseTheCreate(create: () => Promise<ApiResponse>) {
    await proxy.set('reset', 1, ['PutItem'], 1, 3);
    const lost = await create();
    await proxy.set('pass');
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    return create();
  }

  it('P2 leaves exactly one planning', async () => {
    const orgId = await newOrganisation(api, admin, 'Lost answers');
    const planner = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgId);
    const key = newKey();
    const retried = await loseTheCreate(() =>
      api.post<{ id: string }>('/v1/plannings', { name: 'Lost once' }, planner.token, keyed(key)),
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const listed = await api.get<{ plannings: { id: string; name: string }[] }>('/v1/plannings', planner.token);
    expect(listed.body.plannings.filter((p) => p.name === 'Lost once')).toEqual([
      expect.objectContaining({ id: (retried.body as { id: string }).id }),
    ]);
  });

  it('I4b leaves exactly one import job', async () => {
    const orgId = await newOrganisation(api, admin, 'Lost imports', 'merchant');
    const importer = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgId);
    const presigned = await api.get<{ file: { storage_upload_key: string; url: string } }>(
      '/v1/task-import-jobs/upload-url?filename=tasks.csv',
      importer.token,
    );
    expect(presigned.status).toBe(200);
    const put = await putUpload(presigned.body.file.url, readFileSync('test/fixtures/tasks.csv'));
    expect(put.status).toBe(200);
    const key = newKey();
    const body = {
      files: [{ storage_upload_key: presigned.body.file.storage_upload_key }],
      ...IMPORT_WINDOW,
    };
    const retried = await loseTheCreate(() =>
      api.post<{ id: string }>('/v1/task-import-jobs', body, importer.token, keyed(key)),
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const listed = await api.get<{ task_import_jobs: { id: string }[] }>('/v1/task-import-jobs', importer.token);
    expect(listed.body.task_import_jobs.map((j) => j.id)).toEqual([(retried.body as { id: string }).id]);
  });

  it('A4 and X8: a single-use secret used by the lost attempt answers its retry as the first call would have', async () => {
    const { invitee, invitation } = await invitedDriver('Lost acceptances', 'lost-invitee');
    const acceptKey = newKey();
    const accept = () =>
      api.post(
        '/v1/auth/accept-invitation',
        { user: { name: 'Lost Answer', password: PASSWORD, invitation_token: invitation } },
        undefined,
        keyed(acceptKey),
      );
    await proxy.set('reset', 1, ['TransactWriteItems'], 0, 3);
    const lost = await accept();
    await proxy.set('pass');
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    const retried = await accept();
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect((await loginAs(api, invitee, PASSWORD)).bearer_token).toBeTruthy();
    // Another key with the same token is another request: the token is used.
    expect(
      (
        await api.post(
          '/v1/auth/accept-invitation',
          { user: { name: 'Lost Answer', password: PASSWORD, invitation_token: invitation } },
          undefined,
          keyed(newKey()),
        )
      ).status,
    ).toBe(410);

    const driver = unique('lost-code');
    await api.post('/v1/auth/register-driver', { user: { email: driver, password: PASSWORD, name: 'Co De' } });
    await api.post('/v1/auth/security-code', { user: { email: driver } });
    const code = (await lastMail(driver, 'security_code'))['security_code']!;
    const verifyKey = newKey();
    const verify = () =>
      api.post(
        '/v1/auth/verify-security-code',
        { user: { email: driver, security_code: code } },
        undefined,
        keyed(verifyKey),
      );
    await proxy.set('reset', 1, ['TransactWriteItems'], 0, 3);
    const lostCode = await verify();
    await proxy.set('pass');
    expect(lostCode.status, JSON.stringify(lostCode.body)).toBe(503);
    expect((await verify()).status).toBe(200);
  });

  it('X2 leaves exactly one organisation', async () => {
    const name = `Lost org ${randomBytes(4).toString('hex')}`;
    const key = newKey();
    const retried = await loseTheCreate(() =>
      api.post<{ id: string }>('/v1/admin/organisations', { name, kind: 'merchant' }, admin, keyed(key)),
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const named: string[] = [];
    let token: string | null = null;
    do {
      const listed: ApiResponse<{
        organisations: { id: string; name: string }[];
        meta: { next_page_token: string | null };
      }> = await api.get(
        `/v1/admin/organisations?per_page=100${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
        admin,
      );
      expect(listed.status).toBe(200);
      named.push(...listed.body.organisations.filter((o) => o.name === name).map((o) => o.id));
      token = listed.body.meta.next_page_token;
    } while (token);
    expect(named).toEqual([(retried.body as { id: string }).id]);
  });
});

describe('idem7: accounts, clients and auth codes created by a request whose answer was lost', () => {
  /** Every attempt of the create's transaction is applied and its answer lost; then the same request again. */
  async function loseTheTransaction(create: () => Promise<ApiResponse>, operations = ['TransactWriteItems']) {
    // The first PutItem (when PutItem is named) is the key's idempotency record.
    await proxy.set('reset', 1, operations, operations.includes('PutItem') ? 1 : 0, 3);
    const lost = await create();
    await proxy.set('pass');
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    return create();
  }

  /** Items of the main table (read straight from the emulator: the test counts what was written). */
  async function mainItems(): Promise<Record<string, unknown>[]> {
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: inject('endpoints').dynamodb,
        region: 'us-east-1',
        credentials: LOCAL_CREDENTIALS,
      }),
    );
    const items: Record<string, unknown>[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const out = await client.send(
        new ScanCommand({ TableName: process.env['MAIN_TABLE']!, ExclusiveStartKey: cursor }),
      );
      items.push(...((out.Items ?? []) as Record<string, unknown>[]));
      cursor = out.LastEvaluatedKey;
    } while (cursor);
    return items;
  }

  it('A2 and X1: the retry answers 201 with the account the lost attempt made; another key is still a 409', async () => {
    for (const path of ['/v1/auth/register-driver', '/v1/auth/register-merchant']) {
      const email = unique('lost-registration');
      const key = newKey();
      const body = { user: { email, password: PASSWORD, name: 'Lost Registration' } };
      const retried = await loseTheTransaction(() => api.post<{ user_id: string }>(path, body, undefined, keyed(key)));
      expect(retried.status, `${path} ${JSON.stringify(retried.body)}`).toBe(201);
      const user = (retried.body as { user_id: string }).user_id;
      const found = await api.get<{ id: string }>(`/v1/admin/users/${user}`, admin);
      expect(found.status, path).toBe(200);
      expect(found.body).toMatchObject({ id: user, email });
      expect((await api.post(path, body, undefined, keyed(newKey()))).status, path).toBe(409);
    }
  }, 120_000);

  it('A5, A7 and A8: the retry invites the address once, and its invitation can be accepted', async () => {
    const orgId = await newOrganisation(api, admin, 'Lost invitations');
    const orgAdmin = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgId);
    const invitations = [
      ['/v1/org-admin/invitations', (email: string) => ({ user: { email } }), orgAdmin.token, 201],
      ['/v1/admin/invitations', (email: string) => ({ user: { email, org_id: orgId } }), admin, 201],
      ['/v1/admin/invitations/bulk', (email: string) => ({ user: { emails: [email], org_id: orgId } }), admin, 200],
    ] as const;
    for (const [path, bodyFor, token, status] of invitations) {
      const email = unique('lost-invitation');
      const key = newKey();
      const retried = await loseTheTransaction(() => api.post(path, bodyFor(email), token, keyed(key)));
      expect(retried.status, `${path} ${JSON.stringify(retried.body)}`).toBe(status);
      if (status === 200) expect(retried.body).toMatchObject({ invited: [email], failed: [] });
      const invitation = (await lastMail(email, 'invitation'))['invitation_token']!;
      const accepted = await api.post('/v1/auth/accept-invitation', {
        user: { name: 'Lost Invitee', password: PASSWORD, invitation_token: invitation },
      });
      expect(accepted.status, path).toBe(200);
      expect((await loginAs(api, email, PASSWORD)).bearer_token).toBeTruthy();
    }
  }, 120_000);

  it('T3 and X7: one client, whose secret in the retry’s answer is the one that works', async () => {
    const orgId = await newOrganisation(api, admin, 'Lost partners');
    const creates = [
      ['/v1/admin/partner-authorizations', { webhook_url: 'https://hooks.example/lost', org_id: orgId }],
      ['/v1/admin/clients', { roles: ['RunsheetBroadcastRecordWorker'] }],
    ] as const;
    for (const [path, extra] of creates) {
      const name = `Lost client ${randomBytes(4).toString('hex')}`;
      const key = newKey();
      const retried = await loseTheTransaction(() =>
        api.post<{ id: string; client_key: string; secret_key: string }>(path, { name, ...extra }, admin, keyed(key)),
      );
      expect(retried.status, `${path} ${JSON.stringify(retried.body)}`).toBe(201);
      const made = retried.body as { id: string; client_key: string; secret_key: string };
      const token = await api.call('POST', '/v1/auth/token', {
        headers: { authorization: basic(made.client_key, made.secret_key) },
        body: { grant_type: 'client_credentials' },
      });
      expect(token.status, `${path} ${JSON.stringify(token.body)}`).toBe(200);
      const named = (await mainItems()).filter((item) => item['entity'] === 'client' && item['name'] === name);
      expect(
        named.map((item) => item['id']),
        path,
      ).toEqual([made.id]);
    }
  }, 120_000);

  it('T8: one auth code, the one the retry answers', async () => {
    const orgId = await newOrganisation(api, admin, 'Lost codes');
    const partner = await api.post<{ client_key: string; secret_key: string }>(
      '/v1/admin/partner-authorizations',
      { name: 'Lost codes app', webhook_url: 'https://hooks.example/codes', org_id: orgId },
      admin,
    );
    const member = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, orgId);
    const key = newKey();
    const retried = await loseTheTransaction(
      () =>
        api.post<{ auth_code: string }>(
          '/v1/auth/auth-codes',
          { refresh_token: member.refresh_token, client_auth: { key: partner.body.client_key, name: 'Lost app' } },
          member.token,
          keyed(key),
        ),
      ['PutItem', 'TransactWriteItems'],
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const code = (retried.body as { auth_code: string }).auth_code;
    const codes = (await mainItems()).filter((item) => item['entity'] === 'auth_code' && item['user_id'] === member.id);
    expect(codes.map((item) => item['id'])).toHaveLength(1);
    const redeemed = await api.call('POST', '/v1/auth/token', {
      headers: { authorization: basic(partner.body.client_key, partner.body.secret_key) },
      body: { grant_type: 'authorization_code', code },
    });
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
  }, 120_000);
});
