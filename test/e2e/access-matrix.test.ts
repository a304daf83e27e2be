/**
 * The access matrix, generated from the route table: every operation called with no token and with a real token of
 * every role (users, a partner with the default scope, a partner with every scope, each internal worker) answers
 * 401/403 exactly where its access rule and scopes say, and anything else where it admits the caller; every 403's
 * detail names what the token has and what the operation needs. Calls carry no body, so nothing is ever created by
 * this test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { accessAllows } from '../../shared/auth/access.ts';
import { INTERNAL_ROLES, PARTNER_SCOPES, ROLES, type Role, type Scope } from '../../shared/auth/roles.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';
import { type Client, client, invitedMember, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
const principals: { name: string; kind: 'user' | 'client'; roles: Role[]; scopes?: Scope[]; token: string }[] = [];
const SAMPLE = { uuid: '00000000-0000-4000-8000-000000000000', objectId: '000000000000000000000000' };

const pathOf = (route: RouteDef) =>
  route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name === 'import_job_id' || name === 'notification_id') return SAMPLE.objectId;
    if (name === 'email') return 'nobody%40example.com';
    if (name === 'client_key' || name === 'auth_code' || name === 'runsheetID') return 'unknown';
    return SAMPLE.uuid;
  });

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  principals.push({ name: 'SysAdmin', kind: 'user', roles: ['SysAdmin'], token: admin });
  const org = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Matrix', kind: 'transporter' }, admin)
  ).body.id;
  for (const role of ['OrgAdmin', 'OrgDriver', 'OrgTransporter', 'Merchant'] as const) {
    principals.push({
      name: role,
      kind: 'user',
      roles: [role],
      token: (await invitedMember(api, admin, role, ROLES[role], org)).token,
    });
  }
  // Self-registered kinds: created as registration would, then confirmed by SysAdmin.
  const { createUser } = await import('../../shared/accounts/users.ts');
  const { hashPassword } = await import('../../shared/auth/passwords.ts');
  for (const role of ['Driver', 'Transporter'] as const) {
    const email = `${role.toLowerCase()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
    await createUser({
      email,
      name: role,
      roles: [role],
      password_hash: await hashPassword('a-good-long-password'),
      confirmed_at: new Date().toISOString(),
    });
    principals.push({
      name: role,
      kind: 'user',
      roles: [role],
      token: (await loginAs(api, email, 'a-good-long-password')).bearer_token,
    });
  }
  const token = async (key: string, secret: string) =>
    (
      await api.call<{ bearer_token: string }>('POST', '/v1/auth/token', {
        headers: { authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}` },
        body: { grant_type: 'client_credentials' },
      })
    ).body.bearer_token;
  // A partner as T3 makes it (the default scope, users:invite), and one with every scope (contract section 3).
  for (const scopes of [['users:invite'], [...PARTNER_SCOPES]] as Scope[][]) {
    const partner = (
      await api.post<{ client_key: string; secret_key: string }>(
        '/v1/admin/partner-authorizations',
        { name: 'Matrix partner', webhook_url: 'https://hooks.example/m', org_id: org, scopes },
        admin,
      )
    ).body;
    principals.push({
      name: scopes.length === 1 ? 'Partner' : 'Partner with every scope',
      kind: 'client',
      roles: ['Partner'],
      scopes,
      token: await token(partner.client_key, partner.secret_key),
    });
  }
  for (const role of INTERNAL_ROLES) {
    const worker = (
      await api.post<{ client_key: string; secret_key: string }>(
        '/v1/admin/clients',
        { name: role, roles: [role] },
        admin,
      )
    ).body;
    principals.push({
      name: role,
      kind: 'client',
      roles: [role],
      token: await token(worker.client_key, worker.secret_key),
    });
  }
}, 120_000);
afterAll(() => host?.stop());

describe('the access matrix', () => {
  it('covers every role of the contract', () => {
    expect([...new Set(principals.flatMap((p) => p.roles))].sort()).toEqual(Object.keys(ROLES).sort());
  });

  it('answers 401 without a token and 403 for a refused role on every protected route, and neither for an admitted one', async () => {
    let checked = 0;
    const wrong: string[] = [];
    // X6 without a refresh token signs the caller out everywhere: it goes last, or every later call would be 401.
    const ordered = [...(routes as readonly RouteDef[])].sort((a, b) => Number(a.id === 'X6') - Number(b.id === 'X6'));
    for (const route of ordered) {
      const path = pathOf(route);
      const send = (token?: string) =>
        api.call(route.method, path, {
          token,
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
        });
      if (route.access !== 'public') {
        // No Authorization header: API Gateway's own 401 (the authorizer's identity source is missing), no function.
        const anonymous = await send();
        if (anonymous.status !== 401 || JSON.stringify(anonymous.body) !== '{"message":"Unauthorized"}')
          wrong.push(`${route.id} without a token: ${anonymous.status} ${JSON.stringify(anonymous.body)}`);
        // A present but bad token: the handler kit's problem+json 401.
        const forged = await send('not.a.token');
        if (forged.status !== 401 || forged.headers.get('content-type') !== 'application/problem+json')
          wrong.push(`${route.id} with a bad token: ${forged.status} ${forged.headers.get('content-type')}`);
        checked++;
      }
      // Some public routes read their own credential from Authorization (T2, X5): they are not role-checked.
      if (route.access === 'public') continue;
      for (const principal of principals) {
        const admitted = accessAllows(route.access, principal, route.scopes);
        const answer = await send(principal.token);
        const detail = (answer.body as { detail?: string } | undefined)?.detail ?? '';
        if (answer.status === 403 && !admitted && !/^your token has .+; \S+ needs .+/.test(detail))
          wrong.push(`${route.id} as ${principal.name}: the 403 says "${detail}"`);
        // Empty bodies stop at validation, so an admitted caller meets a 400 or a 404, never a 401 or 403.
        if (admitted && (answer.status === 401 || answer.status === 403))
          wrong.push(`${route.id} as ${principal.name}: ${answer.status}`);
        if (!admitted && answer.status !== 403)
          wrong.push(`${route.id} as ${principal.name}: ${answer.status} (expected 403)`);
        expect(answer.status, `${route.id} as ${principal.name}`).toBeLessThan(500);
        checked++;
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(routes.length * 10);
  }, 300_000);
});
