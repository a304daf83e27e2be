/**
 * A new user's first walk over HTTP against a started local host: log in as the admin, create an organisation,
 * list roles, refresh (the old refresh token then fails and revokes its family), log out; and the doors a caller
 * must not get through.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { type Client, client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
});
afterAll(() => host?.stop());

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('a new user walks the front door', () => {
  it('logs in, creates an organisation, lists roles, refreshes, and logs out', async () => {
    const session = await loginAs(api, ADMIN.email, ADMIN.password);
    expect(session.user).toMatchObject({ email: ADMIN.email, roles: ['SysAdmin'] });

    const org = await api.post<{ id: string }>(
      '/v1/admin/organisations',
      { name: 'Acme Logistics', kind: 'merchant' },
      session.bearer_token,
    );
    expect(org.status).toBe(201);
    const listed = await api.get<{ organisations: { id: string }[] }>('/v1/admin/organisations', session.bearer_token);
    expect(listed.body.organisations.map((o) => o.id)).toContain(org.body.id);
    expect((await api.get(`/v1/admin/organisations/${org.body.id}`, session.bearer_token)).body).toMatchObject({
      name: 'Acme Logistics',
    });

    const roles = await api.get<{ roles: unknown[] }>('/v1/roles', session.bearer_token);
    expect(roles.status).toBe(200);
    expect(roles.body.roles).toHaveLength(13);

    const refreshed = await api.post<{ bearer_token: string; refresh_token: string }>('/v1/auth/refresh', {
      refresh_token: session.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    expect((await api.get('/v1/roles', refreshed.body.bearer_token)).status).toBe(200);
    const reused = await api.post('/v1/auth/refresh', { refresh_token: session.refresh_token });
    expect(reused.status).toBe(401);
    expect(reused.headers.get('content-type')).toBe('application/problem+json');
    // Reuse revoked the family: the successor is dead too.
    expect((await api.post('/v1/auth/refresh', { refresh_token: refreshed.body.refresh_token })).status).toBe(401);

    const again = await loginAs(api, ADMIN.email, ADMIN.password);
    const out = await api.post('/v1/auth/logout', { refresh_token: again.refresh_token }, again.bearer_token);
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ code: 'success', server_time: expect.stringMatching(/Z$/) });
    expect((await api.post('/v1/auth/refresh', { refresh_token: again.refresh_token })).status).toBe(401);
  });

  it('answers a POST repeated with the same Idempotency-Key once, through the idempotency table', async () => {
    const session = await loginAs(api, ADMIN.email, ADMIN.password);
    const headers = { 'idempotency-key': 'walk-org-once' };
    const body = { name: 'Once Only Freight', kind: 'merchant' };
    const first = await api.post<{ id: string }>('/v1/admin/organisations', body, session.bearer_token, headers);
    const second = await api.post<{ id: string }>('/v1/admin/organisations', body, session.bearer_token, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
  });

  it('serves the public keys, and tokens verify against them', async () => {
    const jwks = await api.get<{ keys: Record<string, unknown>[] }>('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(jwks.body.keys[0]).not.toHaveProperty('d');
  });
});

describe('tokens that must not pass', () => {
  let good: string;
  beforeAll(async () => {
    good = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  });

  const expect401 = async (token: string | undefined) => {
    const response = await api.get('/v1/roles', token);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'unauthenticated', status: 401, request_id: expect.any(String) });
  };

  it('no token: API Gateway’s own 401, no function runs (contract section 3)', async () => {
    const response = await api.get('/v1/roles');
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.body).toEqual({ message: 'Unauthorized' });
  });

  it('a header that is no bearer token', () => expect401('not-a-jwt'));

  it('a tampered payload', async () => {
    const [header, payload, signature] = good.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    await expect401(`${header}.${b64({ ...claims, roles: ['SysAdmin', 'Partner'] })}.${signature}`);
  });

  it('an expired token', async () => {
    const [header, payload, signature] = good.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    await expect401(`${header}.${b64({ ...claims, exp: 1_000_000 })}.${signature}`);
  });

  it('alg none', async () => {
    const claims = JSON.parse(Buffer.from(good.split('.')[1]!, 'base64url').toString());
    await expect401(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`);
  });

  it('HS256 keyed with the public key', async () => {
    const claims = JSON.parse(Buffer.from(good.split('.')[1]!, 'base64url').toString());
    const jwks = await api.get<{ keys: { kid: string }[] }>('/.well-known/jwks.json');
    const secret = new TextEncoder().encode(JSON.stringify(jwks.body.keys[0]));
    await expect401(
      await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: jwks.body.keys[0]!.kid }).sign(secret),
    );
  });

  it('a non-bearer scheme', async () => {
    const response = await api.call('GET', '/v1/roles', { headers: { authorization: `Basic ${good}` } });
    expect(response.status).toBe(401);
  });
});

describe('the contract conventions hold at the door', () => {
  it('answers preflight for every path with the CORS headers', async () => {
    const response = await fetch(`${host.url}/v1/auth/login`, { method: 'OPTIONS' });
    expect([200, 204]).toContain(response.status);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    for (const header of ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'X-Platform-ID']) {
      expect(response.headers.get('access-control-allow-headers')).toContain(header);
    }
  });

  it('refuses an Idempotency-Key over 255 characters at header.idempotency-key, as the document states', async () => {
    const tooLong = await api.call('POST', '/v1/auth/security-code', {
      body: { user: { email: 'nobody@example.com' } },
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({ errors: [{ path: 'header.idempotency-key' }] });
    const fits = await api.call('POST', '/v1/auth/security-code', {
      body: { user: { email: 'nobody@example.com' } },
      headers: { 'idempotency-key': 'k'.repeat(255) },
    });
    expect(fits.status).toBe(202);
  });

  it('echoes X-Request-Id, or makes one, on every response, errors included', async () => {
    const echoed = await api.call('GET', '/v1/roles', {
      token: 'not-a-jwt',
      headers: { 'x-request-id': 'trace-me-123' },
    });
    expect(echoed.headers.get('x-request-id')).toBe('trace-me-123');
    expect(echoed.body).toMatchObject({ request_id: 'trace-me-123' });
    const made = await api.get('/v1/nowhere');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.headers.get('access-control-allow-origin')).toBe('*');
    expect(made.status).toBe(404);
    expect(made.body).toMatchObject({ code: 'not_found' });
  });

  it('answers malformed JSON, a non-JSON body, a non-object body and a huge body with the right problems', async () => {
    const malformed = await api.call('POST', '/v1/auth/login', {
      rawBody: '{"user":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.body).toMatchObject({ status: 400, code: 'malformed_json' });
    const form = await api.call('POST', '/v1/auth/login', {
      rawBody: 'user=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.body).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    const array = await api.post('/v1/auth/login', [1, 2]);
    expect(array.body).toMatchObject({ status: 400, code: 'validation_failed', errors: [{ path: 'body' }] });
    const huge = await api.post('/v1/auth/login', { user: { email: 'a@b.co', password: 'x'.repeat(1_100_000) } });
    expect(huge.body).toMatchObject({ status: 413, code: 'payload_too_large' });
  });

  it('serves health, the OpenAPI document and the docs page', async () => {
    expect((await api.get('/health')).status).toBe(200);
    const openapi = await api.get<{ openapi: string; paths: Record<string, Record<string, { 'x-spec-id': string }>> }>(
      '/openapi.json',
    );
    expect(openapi.body.openapi).toBe('3.1.0');
    expect(openapi.body.paths['/v1/auth/login']?.['post']?.['x-spec-id']).toBe('A1');
    const docs = await fetch(`${host.url}/docs`);
    expect(await docs.text()).toContain('/openapi.json');
    expect((await fetch(`${host.url}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
    const outbox = await api.get<{ messages: unknown[] }>('/_local/outbox');
    expect(outbox.body.messages).toEqual([]);
  });
});
