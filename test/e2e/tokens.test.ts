/**
 * Issue 4 over HTTP: partners and client credentials, auth codes, internal clients, platform sessions, the external
 * token exchange against a real local OIDC issuer, and signed webhooks to a real local receiver.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { resetClock, setClock } from '../../shared/clock.ts';
import { webhookNetwork } from '../../shared/webhooks/deliveries.ts';
import {
  type ApiResponse,
  type Client,
  client,
  clientCredentialsToken,
  internalClientToken,
  invitedMember,
  loginAs,
} from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let host: RunningHost;
let api: Client;
let admin: string;
let orgId: string;
const PASSWORD = 'a-good-long-password';
const _tag = Math.random().toString(36).slice(2, 7);

// A real OIDC issuer: its own RS256 key, its JWKS served over HTTP.
const issuer = { url: '', server: undefined as Server | undefined, key: undefined as SigningKey | undefined };

const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://localhost:${(server.address() as AddressInfo).port}` };
}

const invitedUser = (role: keyof typeof ROLES, org: string) => invitedMember(api, admin, role, ROLES[role], org);

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  issuer.key = privateKey as SigningKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'issuer-key-1', alg: 'RS256', use: 'sig' };
  const served = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  issuer.server = served.server;
  issuer.url = served.url;
  Object.assign(process.env, {
    EXTERNAL_ISSUER: 'https://id.example.test/',
    EXTERNAL_AUDIENCE: 'dispatch-exchange',
    EXTERNAL_JWKS_URL: `${served.url}/jwks.json`,
    WEBHOOK_RETRY_DELAYS_MS: '150,150,150',
  });
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgId = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Platform', kind: 'platform' }, admin))
    .body.id;
});
afterAll(async () => {
  await host?.stop();
  issuer.server?.close();
});

type Partner = { id: string; client_key: string; secret_key: string; webhook_secret: string };

describe('a partner integrates', () => {
  it('admin creates a partner → client credentials → T7 → an OrgAdmin’s auth code is redeemed once → T9', async () => {
    const created = await api.post<Partner>(
      '/v1/admin/partner-authorizations',
      { name: 'Acme Integrations', webhook_url: 'https://hooks.acme.example/dispatch', org_id: orgId },
      admin,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      client_key: expect.stringMatching(/^ck_/),
      secret_key: expect.stringMatching(/^sk_/),
      webhook_secret: expect.stringMatching(/^whsec_/),
      org_id: orgId,
    });
    const renamed = await api.put(
      `/v1/admin/partner-authorizations/${created.body.id}`,
      { name: 'Acme Integrations Ltd', webhook_url: 'https://hooks.acme.example/dispatch' },
      admin,
    );
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: created.body.id, name: 'Acme Integrations Ltd' });
    const read = await api.get(`/v1/admin/partner-authorizations/${created.body.id}`, admin);
    expect(read.body).toMatchObject({ name: 'Acme Integrations Ltd' });
    expect(read.body).not.toHaveProperty('secret_key');
    expect(read.body).not.toHaveProperty('webhook_secret');
    const listed = await api.get<{ partner_authorizations: { id: string }[] }>(
      '/v1/admin/partner-authorizations',
      admin,
    );
    expect(listed.body.partner_authorizations.map((p) => p.id)).toContain(created.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret_key);

    const token = await api.call<{ bearer_token: string; bearer_token_expired_at: number }>('POST', '/v1/auth/token', {
      headers: {
        authorization: basic(created.body.client_key, created.body.secret_key),
        'content-type': 'application/x-www-form-urlencoded',
      },
      rawBody: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    expect(token.body.bearer_token_expired_at).toBeGreaterThan(Date.now() / 1000);
    const partnerToken = token.body.bearer_token;
    const basics = await api.get(`/v1/partners/${created.body.client_key}`, partnerToken);
    expect(basics.body).toEqual({
      client_key: created.body.client_key,
      name: 'Acme Integrations Ltd',
      webhook_url: 'https://hooks.acme.example/dispatch',
    });
    expect((await api.get('/v1/me', partnerToken)).status).toBe(403);

    const orgAdmin = await invitedUser('OrgAdmin', orgId);
    const code = await api.post<{ auth_code: string; server_time: string }>(
      '/v1/auth/auth-codes',
      { refresh_token: orgAdmin.refresh_token, client_auth: { key: created.body.client_key, name: 'Acme app' } },
      orgAdmin.token,
    );
    expect(code.status).toBe(201);
    const redeem = () =>
      api.call<{ bearer_token: string }>('POST', '/v1/auth/token', {
        headers: { authorization: basic(created.body.client_key, created.body.secret_key) },
        body: { grant_type: 'authorization_code', code: code.body.auth_code },
      });
    const redeemed = await redeem();
    expect(redeemed.status).toBe(200);
    const actingAs = await api.get<{ user: { email: string } }>('/v1/me', redeemed.body.bearer_token);
    expect(actingAs.body.user.email).toBe(orgAdmin.email);
    const again = await redeem();
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ code: 'gone' });

    const record = await api.get<Record<string, unknown>>(`/v1/admin/auth-codes/${code.body.auth_code}`, admin);
    expect(record.body).toMatchObject({
      auth_code: code.body.auth_code,
      client_auth: { key: created.body.client_key, name: 'Acme app' },
      email: orgAdmin.email,
      roles: 'OrgAdmin',
      org_id: orgId,
      token: expect.any(String),
    });
    expect((await api.get(`/v1/admin/auth-codes/not-a-code`, admin)).status).toBe(404);
  });

  it('refuses every bad credential with 401 or 410, never a 500', async () => {
    const partner = (
      await api.post<Partner>(
        '/v1/admin/partner-authorizations',
        { name: 'Bad Creds', webhook_url: 'https://hooks.example/x' },
        admin,
      )
    ).body;
    const grant = (authorization: string | undefined, body: unknown = { grant_type: 'client_credentials' }) =>
      api.call('POST', '/v1/auth/token', { headers: authorization ? { authorization } : {}, body });
    expect((await grant(basic(partner.client_key, 'sk_wrong'))).status).toBe(401);
    expect((await grant(basic('ck_unknown', partner.secret_key))).status).toBe(401);
    expect((await grant(undefined)).status).toBe(401);
    expect(await grant('Basic !!!not-base64')).toMatchObject({ status: 401 });
    // Malformed percent-escapes in the credentials (RFC 6749 2.3.1 encodes them) are a 401, not a URIError's 500.
    for (const credentials of ['%:%', `${partner.client_key}:%`, '%zz:secret', `${partner.client_key}:%E0%A4%A`]) {
      const answer = await grant(`Basic ${Buffer.from(credentials).toString('base64')}`);
      expect(answer, credentials).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    }
    expect((await grant(`Bearer ${admin}`)).status).toBe(401);
    expect((await grant(basic(partner.client_key, partner.secret_key), { grant_type: 'password' })).body).toMatchObject(
      { status: 400, errors: [{ path: 'grant_type' }] },
    );
    expect(
      (await grant(basic(partner.client_key, partner.secret_key), { grant_type: 'authorization_code' })).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'code' }] });
    expect(
      (
        await grant(basic(partner.client_key, partner.secret_key), {
          grant_type: 'authorization_code',
          code: 'never-issued',
        })
      ).status,
    ).toBe(400);

    const token = (await grant(basic(partner.client_key, partner.secret_key))).body as { bearer_token: string };
    expect((await api.get(`/v1/partners/${partner.client_key}`, token.bearer_token)).status).toBe(200);
    expect((await api.delete(`/v1/admin/clients/${partner.id}`, undefined, admin)).status).toBe(200);
    expect((await grant(basic(partner.client_key, partner.secret_key))).status).toBe(401);
    expect((await api.get(`/v1/partners/${partner.client_key}`, token.bearer_token)).status).toBe(401);
  });

  it('refuses a webhook URL that is not https (or local http in local mode)', async () => {
    for (const url of [
      'ftp://hooks.example/x',
      'not a url',
      'http://hooks.example/x',
      'https://user:pw@hooks.example/x',
    ]) {
      const response = await api.post('/v1/admin/partner-authorizations', { name: 'Bad URL', webhook_url: url }, admin);
      expect(response.body, url).toMatchObject({ status: 400, errors: [{ path: 'webhook_url' }] });
    }
    expect(
      (
        await api.post(
          '/v1/admin/partner-authorizations',
          { name: 'Local', webhook_url: 'http://localhost:9/hook' },
          admin,
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await api.post(
          '/v1/admin/partner-authorizations',
          { name: 'x', webhook_url: 'https://a.example', org_id: '00000000-0000-4000-8000-000000000000' },
          admin,
        )
      ).body,
    ).toMatchObject({ status: 400, errors: [{ path: 'org_id' }] });
  });
});

describe('internal clients', () => {
  it('carry internal roles only, show the secret once, and authenticate', async () => {
    const created = await api.post<{ id: string; client_key: string; secret_key: string; roles: string[] }>(
      '/v1/admin/clients',
      { name: 'Import worker', roles: ['ImportWorker', 'RRTB'] },
      admin,
    );
    expect(created.status).toBe(201);
    expect(created.body.roles).toEqual(['ImportWorker', 'RRTB']);
    expect((await api.post('/v1/admin/clients', { name: 'Sneaky', roles: ['SysAdmin'] }, admin)).body).toMatchObject({
      status: 400,
      errors: [{ path: 'roles[0]' }],
    });
    const listed = await api.get<{ clients: { id: string }[] }>('/v1/admin/clients', admin);
    expect(listed.body.clients.map((c) => c.id)).toContain(created.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret_key);
    const token = await api.call<{ bearer_token: string }>('POST', '/v1/auth/token', {
      headers: { authorization: basic(created.body.client_key, created.body.secret_key) },
      body: { grant_type: 'client_credentials' },
    });
    const claims = JSON.parse(Buffer.from(token.body.bearer_token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ sub: created.body.id, roles: ['ImportWorker', 'RRTB'], kind: 'client' });
    expect((await api.get('/v1/roles', token.body.bearer_token)).status).toBe(200);
    expect(
      (await api.post('/v1/admin/organisations', { name: 'x', kind: 'merchant' }, token.body.bearer_token)).status,
    ).toBe(403);
  });
});

describe('a token that was valid once (contract section 3, issue 46.9)', () => {
  /** The 401 a person and a client's library read: `detail` and RFC 6750's challenge say the same. */
  function refusal(response: ApiResponse) {
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'unauthenticated' });
    const detail = String((response.body as { detail: string }).detail);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="${detail}"`,
    );
    return detail;
  }
  /** The same request two hours on: every bearer token has expired, nothing else changed. */
  async function later<T>(call: () => Promise<T>): Promise<T> {
    setClock(() => Date.now() + 2 * 3600_000);
    try {
      return await call();
    } finally {
      resetClock();
    }
  }

  it('an expired token of each kind says it expired and how to get a new one', async () => {
    const user = await invitedUser('OrgAdmin', orgId);
    const partner = await api.post<Partner>(
      '/v1/admin/partner-authorizations',
      { name: 'Expiring partner', webhook_url: 'https://hooks.expiring.example/x', org_id: orgId },
      admin,
    );
    const partnerToken = await clientCredentialsToken(api, partner.body.client_key, partner.body.secret_key);
    const workerToken = await internalClientToken(api, admin, 'Expiring worker', ['ImportWorker']);
    const [userRead, partnerRead, workerRead] = await later(() =>
      Promise.all([
        api.get('/v1/me', user.token),
        api.get('/v1/roles', partnerToken),
        api.get('/v1/roles', workerToken),
      ]),
    );
    const userSays = refusal(userRead);
    expect(userSays).toMatch(/^the bearer token expired at \d{4}-\d\d-\d\dT[\d:.]+Z; /);
    expect(userSays).toContain('POST /v1/auth/refresh');
    expect(userSays).toContain('POST /v1/auth/login');
    for (const read of [partnerRead, workerRead]) {
      const says = refusal(read);
      expect(says).toMatch(/^the bearer token expired at /);
      expect(says).toContain('POST /v1/auth/token, grant_type=client_credentials');
    }
    // A token that never held still never says which (contract section 2).
    const forged = await api.get('/v1/me', `${user.token.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ detail: 'a valid credential is required' });
    expect(forged.headers.get('www-authenticate')).toBeNull();
  });

  it('a revoked token of each kind says it was revoked and how to get a new one', async () => {
    const user = await invitedUser('OrgAdmin', orgId);
    expect((await api.post('/v1/auth/logout', {}, user.token)).status).toBe(200);
    const userSays = refusal(await api.get('/v1/me', user.token));
    expect(userSays).toMatch(/^the bearer token was revoked \(signed out everywhere/);
    expect(userSays).toContain('POST /v1/auth/login');

    const partner = await api.post<Partner>(
      '/v1/admin/partner-authorizations',
      { name: 'Revoked partner', webhook_url: 'https://hooks.revoked.example/x', org_id: orgId },
      admin,
    );
    const partnerToken = await clientCredentialsToken(api, partner.body.client_key, partner.body.secret_key);
    expect((await api.delete(`/v1/admin/clients/${partner.body.id}`, undefined, admin)).status).toBe(200);
    const partnerSays = refusal(await api.get('/v1/roles', partnerToken));
    expect(partnerSays).toMatch(/^the bearer token was revoked \(its client/);
    expect(partnerSays).toContain('ask a SysAdmin');
  });

  it('T1 says why a refresh token no longer holds: used twice (the session ends), revoked, unknown', async () => {
    const user = await invitedUser('OrgAdmin', orgId);
    const first = await api.post<{ refresh_token: string }>('/v1/auth/refresh', { refresh_token: user.refresh_token });
    expect(first.status).toBe(200);
    const reused = refusal(await api.post('/v1/auth/refresh', { refresh_token: user.refresh_token }));
    expect(reused).toMatch(/^the refresh token was already used/);
    expect(reused).toContain('POST /v1/auth/login');
    const revoked = refusal(await api.post('/v1/auth/refresh', { refresh_token: first.body.refresh_token }));
    expect(revoked).toMatch(/^the session of the refresh token was revoked/);
    expect(refusal(await api.post('/v1/auth/refresh', { refresh_token: 'x'.repeat(43) }))).toMatch(
      /^the refresh token is unknown or expired/,
    );
  });
});

describe('T10 platform sessions', () => {
  it('need the header, the credentials and membership of that platform', async () => {
    const member = await invitedUser('OrgDriver', orgId);
    const session = (platform: string | undefined, password = PASSWORD) =>
      api.call('POST', '/v1/auth/platform-sessions', {
        headers: platform ? { 'x-platform-id': platform } : {},
        body: { user: { email: member.email, password } },
      });
    const ok = await session(orgId);
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ session_id: expect.any(String), org_id: orgId });
    expect((await session(undefined)).body).toMatchObject({ status: 400, errors: [{ path: 'header.x-platform-id' }] });
    expect((await session(orgId, 'wrong-password-here')).status).toBe(401);
    const other = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Other platform', kind: 'platform' }, admin)
    ).body.id;
    expect((await session(other)).status).toBe(403);
  });
});

describe('T2 token exchange against a real OIDC issuer', () => {
  const external = async (claims: Record<string, unknown>, options: { key?: SigningKey; kid?: string } = {}) =>
    new SignJWT({ email: ADMIN.email, email_verified: true, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? 'issuer-key-1' })
      .setIssuer((claims['iss'] as string) ?? 'https://id.example.test/')
      .setAudience((claims['aud'] as string) ?? 'dispatch-exchange')
      .setSubject('ext-user-1')
      .setIssuedAt()
      .setExpirationTime((claims['exp'] as number) ?? '10m')
      .sign(options.key ?? issuer.key!);
  const exchange = (token: string) =>
    api.call<{ message: string; bearer_token: string; bearer_token_expired_at: number }>('POST', '/v1/auth/exchange', {
      headers: { authorization: `Bearer ${token}` },
    });

  it('gives a known account a service token, and an unknown one the default payload', async () => {
    const known = await exchange(await external({}));
    expect(known.status).toBe(200);
    expect(known.body.bearer_token_expired_at).toBeGreaterThan(0);
    expect((await api.get<{ user: { email: string } }>('/v1/me', known.body.bearer_token)).body.user.email).toBe(
      ADMIN.email,
    );
    const unknown = await exchange(await external({ email: 'stranger@example.com' }));
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ message: 'account not found', bearer_token: '', bearer_token_expired_at: 0 });
  });

  it('refuses a wrong issuer, a wrong audience, an expired token and an unknown key with 401', async () => {
    const { privateKey: stranger } = await generateKeyPair('RS256');
    const bad = [
      await external({ iss: 'https://evil.example/' }),
      await external({ aud: 'another-api' }),
      await external({ exp: Math.floor(Date.now() / 1000) - 60 }),
      await external({}, { key: stranger as SigningKey }),
      await external({}, { key: stranger as SigningKey, kid: 'unknown-kid' }),
      'not-a-jwt',
    ];
    for (const token of bad) {
      const response = await exchange(token);
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ code: 'unauthenticated' });
    }
    expect((await api.call('POST', '/v1/auth/exchange')).status).toBe(401);
  });

  it('refuses a token whose address the issuer has not verified: email_verified must be true (issue 28.7)', async () => {
    for (const verified of [undefined, false, 'true', 1, null]) {
      const claims: Record<string, unknown> = { email_verified: verified };
      const response = await exchange(await external(claims));
      expect(response.status, String(verified)).toBe(401);
      expect(response.body, String(verified)).toMatchObject({ code: 'unauthenticated' });
    }
  });
});

describe('signed webhooks', () => {
  // Standard Webhooks verification, written from the specification: the key is the base64 after `whsec_`; the
  // signed content is "<webhook-id>.<webhook-timestamp>.<body>"; the header lists "v1,<base64 HMAC-SHA256>" entries.
  function verifyStandardWebhook(secret: string, headers: Record<string, string | string[] | undefined>, body: string) {
    const id = String(headers['webhook-id']);
    const timestamp = Number(headers['webhook-timestamp']);
    if (!id || !Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
    return String(headers['webhook-signature'])
      .split(' ')
      .some((entry) => {
        const [version, signature] = entry.split(',');
        const given = Buffer.from(signature ?? '', 'base64');
        return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
      });
  }

  it('delivers a signed event; after two 500s the third attempt succeeds and the log shows all three', async () => {
    const received: { headers: Record<string, string | string[] | undefined>; body: string; status: number }[] = [];
    const receiver = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const status = received.length < 2 ? 500 : 204;
        received.push({ headers: req.headers, body, status });
        res.writeHead(status);
        res.end(status === 500 ? 'temporarily broken' : '');
      });
    });
    try {
      const partner = (
        await api.post<Partner>(
          '/v1/admin/partner-authorizations',
          { name: 'Hooked', webhook_url: `${receiver.url}/hook`, org_id: orgId },
          admin,
        )
      ).body;
      const sent = await api.post<{ event_id: string }>(
        `/v1/admin/partner-authorizations/${partner.id}/test-events`,
        {},
        admin,
      );
      expect(sent.status).toBe(202);
      const deadline = Date.now() + 10_000;
      while (received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(received.map((r) => r.status)).toEqual([500, 500, 204]);
      for (const attempt of received) {
        expect(verifyStandardWebhook(partner.webhook_secret, attempt.headers, attempt.body)).toBe(true);
        expect(attempt.headers['webhook-id']).toBe(sent.body.event_id);
        expect(
          verifyStandardWebhook(
            `whsec_${Buffer.from('wrong key bytes').toString('base64')}`,
            attempt.headers,
            attempt.body,
          ),
        ).toBe(false);
      }
      expect(JSON.parse(received[2]!.body)).toMatchObject({
        type: 'webhook.test',
        timestamp: expect.any(String),
        data: { partner_authorization_id: partner.id },
      });

      let deliveries: {
        attempt: number;
        status: number;
        outcome: string;
        response_excerpt: string;
        latency_ms: number;
      }[] = [];
      while (deliveries.length < 3 && Date.now() < deadline) {
        deliveries = (
          await api.get<{ deliveries: typeof deliveries }>(
            `/v1/admin/partner-authorizations/${partner.id}/deliveries`,
            admin,
          )
        ).body.deliveries;
      }
      expect(deliveries.map((d) => [d.attempt, d.status, d.outcome])).toEqual([
        [3, 204, 'delivered'],
        [2, 500, 'retrying'],
        [1, 500, 'retrying'],
      ]);
      expect(deliveries[2]!.response_excerpt).toBe('temporarily broken');
      expect(deliveries.every((d) => d.latency_ms >= 0)).toBe(true);

      // The partner reads the same log itself, with any token of its own (scope-free), and only its own (issue 46.10).
      const partnerToken = await clientCredentialsToken(api, partner.client_key, partner.secret_key);
      const own = await api.get<{ deliveries: typeof deliveries }>('/v1/partner/webhook-deliveries', partnerToken);
      expect(own.status).toBe(200);
      expect(own.body.deliveries).toEqual(deliveries);
      // Page by page with its signed page token, as T6.deliveries pages.
      const first = await api.get<{ deliveries: typeof deliveries; meta: { next_page_token: string | null } }>(
        '/v1/partner/webhook-deliveries?per_page=2',
        partnerToken,
      );
      expect(first.body.deliveries).toEqual(deliveries.slice(0, 2));
      const next = await api.get<{ deliveries: typeof deliveries; meta: { next_page_token: string | null } }>(
        `/v1/partner/webhook-deliveries?per_page=2&page_token=${encodeURIComponent(first.body.meta.next_page_token!)}`,
        partnerToken,
      );
      expect(next.body.deliveries).toEqual(deliveries.slice(2));
      expect(next.body.meta.next_page_token).toBeNull();
      const stranger = await api.post<Partner>(
        '/v1/admin/partner-authorizations',
        { name: 'Another partner', webhook_url: 'https://hooks.another.example/x', org_id: orgId },
        admin,
      );
      const theirs = await api.get<{ deliveries: unknown[] }>(
        '/v1/partner/webhook-deliveries',
        await clientCredentialsToken(api, stranger.body.client_key, stranger.body.secret_key),
      );
      expect(theirs.body.deliveries).toEqual([]);
      expect((await api.get('/v1/partner/webhook-deliveries', admin)).status).toBe(403);
    } finally {
      receiver.server.close();
    }
  });
});

describe('webhook delivery to a name that resolves to loopback (issue 28.7)', () => {
  it('is refused at delivery, connects to nothing, and the attempt says why', async () => {
    let connections = 0;
    const loopback = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((done) => loopback.listen(0, '127.0.0.1', done));
    const port = (loopback.address() as AddressInfo).port;
    let partnerId: string | undefined;
    try {
      const partner = await api.post<Partner>(
        '/v1/admin/partner-authorizations',
        { name: 'Rebinder', webhook_url: `https://hooks.rebind.example:${port}/hook`, org_id: orgId },
        admin,
      );
      expect(partner.status).toBe(201);
      partnerId = partner.body.id;
      // As in the cloud (local mode calls URLs unchecked), with a DNS whose answer for the name is 127.0.0.1.
      Object.assign(webhookNetwork, { local: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
      await api.post(`/v1/admin/partner-authorizations/${partnerId}/test-events`, {}, admin);
      let deliveries: { status: number | null; outcome: string; response_excerpt: string }[] = [];
      const deadline = Date.now() + 10_000;
      while (deliveries.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        deliveries = (
          await api.get<{ deliveries: typeof deliveries }>(
            `/v1/admin/partner-authorizations/${partnerId}/deliveries`,
            admin,
          )
        ).body.deliveries;
      }
      expect(deliveries[0]).toMatchObject({
        status: null,
        outcome: 'retrying',
        response_excerpt: expect.stringContaining('must not resolve to a private'),
      });
      expect(connections).toBe(0);
    } finally {
      for (const key of Object.keys(webhookNetwork)) delete webhookNetwork[key as keyof typeof webhookNetwork];
      if (partnerId) await api.delete(`/v1/admin/clients/${partnerId}`, undefined, admin);
      loopback.close();
    }
  });
});
