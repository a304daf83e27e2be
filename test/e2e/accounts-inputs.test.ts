/**
 * Every accounts operation's bad inputs, and every role the operation refuses: each answers the contract's status,
 * `code` and field path, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { accessAllows } from '../../shared/auth/access.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';
import { type Client, client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
const tokens: Partial<Record<Role, string>> = {};
const ids: Partial<Record<Role, string>> = {};
let orgId = '';
const PASSWORD = 'a-good-long-password';
const MISSING = '00000000-0000-4000-8000-000000000000';
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;

async function invited(role: Role): Promise<void> {
  const email = unique(role.toLowerCase());
  await api.post('/v1/admin/invitations', { user: { email, org_id: orgId, role_id: ROLES[role] } }, tokens.SysAdmin);
  const outbox = await api.get<{ messages: { data: Record<string, string> }[] }>(`/_local/outbox?to=${email}`);
  await api.post('/v1/auth/accept-invitation', {
    user: {
      name: `${role} User`,
      password: PASSWORD,
      invitation_token: outbox.body.messages[0]!.data['invitation_token'],
    },
  });
  const session = await loginAs(api, email, PASSWORD);
  tokens[role] = session.bearer_token;
  ids[role] = session.user.id;
}

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  const admin = await loginAs(api, ADMIN.email, ADMIN.password);
  tokens.SysAdmin = admin.bearer_token;
  ids.SysAdmin = admin.user.id;
  orgId = (
    await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Inputs', kind: 'merchant' }, tokens.SysAdmin)
  ).body.id;
  for (const role of ['OrgAdmin', 'OrgDriver', 'OrgTransporter', 'Merchant'] as const) await invited(role);
  const driverEmail = unique('driver');
  await api.post('/v1/auth/register-driver', { user: { email: driverEmail, password: PASSWORD, name: 'Free Driver' } });
  const driver = await api.get<{ id: string }>(`/v1/admin/users/by-email/${driverEmail}`, tokens.SysAdmin);
  await api.post(`/v1/admin/users/${driver.body.id}/confirm`, {}, tokens.SysAdmin);
  const session = await loginAs(api, driverEmail, PASSWORD);
  tokens.Driver = session.bearer_token;
  ids.Driver = session.user.id;
});
afterAll(() => host?.stop());

type Case = [
  label: string,
  as: Role | null,
  method: string,
  path: string | (() => string),
  body: unknown,
  status: number,
  field?: string,
];

const cases: Case[] = [
  ['A2 missing user', null, 'POST', '/v1/auth/register-driver', {}, 400, 'user'],
  [
    'A2 bad email',
    null,
    'POST',
    '/v1/auth/register-driver',
    { user: { email: 'x', password: PASSWORD, name: 'N' } },
    400,
    'user.email',
  ],
  [
    'A2 short password',
    null,
    'POST',
    '/v1/auth/register-driver',
    { user: { email: 'a@b.co', password: 'short', name: 'N' } },
    400,
    'user.password',
  ],
  [
    'A2 phone of the wrong type',
    null,
    'POST',
    '/v1/auth/register-driver',
    { user: { email: 'a@b.co', password: PASSWORD, name: 'N', phone_number: '12' } },
    400,
    'user.phone_number',
  ],
  [
    'X1 missing name',
    null,
    'POST',
    '/v1/auth/register-merchant',
    { user: { email: 'a@b.co', password: PASSWORD } },
    400,
    'user.name',
  ],
  ['A3 bad email', null, 'POST', '/v1/auth/security-code', { user: { email: 'nope' } }, 400, 'user.email'],
  [
    'A3 numeric phone',
    null,
    'POST',
    '/v1/auth/security-code',
    { user: { email: 'a@b.co', phone_number: 12 } },
    400,
    'user.phone_number',
  ],
  [
    'X8 code not 6 digits',
    null,
    'POST',
    '/v1/auth/verify-security-code',
    { user: { email: 'a@b.co', security_code: '12ab' } },
    400,
    'user.security_code',
  ],
  [
    'X8 no such account',
    null,
    'POST',
    '/v1/auth/verify-security-code',
    { user: { email: 'nobody@b.co', security_code: '123456' } },
    400,
    'user.security_code',
  ],
  [
    'A4 missing token',
    null,
    'POST',
    '/v1/auth/accept-invitation',
    { user: { name: 'N', password: PASSWORD } },
    400,
    'user.invitation_token',
  ],
  [
    'A4 short password',
    null,
    'POST',
    '/v1/auth/accept-invitation',
    { user: { name: 'N', password: 'x', invitation_token: 't' } },
    400,
    'user.password',
  ],
  ['A5 bad email', 'OrgAdmin', 'POST', '/v1/org-admin/invitations', { user: { email: 'x' } }, 400, 'user.email'],
  [
    'A5 unknown role',
    'OrgAdmin',
    'POST',
    '/v1/org-admin/invitations',
    { user: { email: 'a@b.co', role_id: MISSING } },
    400,
    'user.role_id',
  ],
  [
    'A5 role it may not give',
    'OrgAdmin',
    'POST',
    '/v1/org-admin/invitations',
    { user: { email: 'a@b.co', role_id: ROLES.SysAdmin } },
    403,
  ],
  [
    'A6 role it may not give',
    'OrgTransporter',
    'POST',
    '/v1/org-transporter/invitations',
    { user: { email: 'a@b.co', role_id: ROLES.OrgAdmin } },
    403,
  ],
  ['A7 missing org', 'SysAdmin', 'POST', '/v1/admin/invitations', { user: { email: 'a@b.co' } }, 400, 'user.org_id'],
  [
    'A7 unknown org',
    'SysAdmin',
    'POST',
    '/v1/admin/invitations',
    { user: { email: 'a@b.co', org_id: MISSING } },
    400,
    'user.org_id',
  ],
  [
    'A8 emails not an array',
    'SysAdmin',
    'POST',
    '/v1/admin/invitations/bulk',
    { user: { emails: 'a@b.co', org_id: MISSING } },
    400,
    'user.emails',
  ],
  [
    'A8 unknown org',
    'SysAdmin',
    'POST',
    '/v1/admin/invitations/bulk',
    { user: { emails: ['a@b.co'], org_id: MISSING } },
    400,
    'user.org_id',
  ],
  ['A10 bad email', null, 'POST', '/v1/auth/password/forgot', { user: { email: 1 } }, 400, 'user.email'],
  [
    'A11 unknown token',
    null,
    'POST',
    '/v1/auth/password/reset',
    { user: { password: PASSWORD, reset_password_token: 'never' } },
    400,
    'user.reset_password_token',
  ],
  [
    'A11 short password',
    null,
    'POST',
    '/v1/auth/password/reset',
    { user: { password: 'x', reset_password_token: 'never' } },
    400,
    'user.password',
  ],
  [
    'A12 wrong current password',
    'OrgDriver',
    'PUT',
    '/v1/me/account',
    { user: { current_password: 'not-it-at-all', password: 'another-long-one' } },
    400,
    'user.current_password',
  ],
  [
    'A12 new password without the current',
    'OrgDriver',
    'PUT',
    '/v1/me/account',
    { user: { password: 'another-long-one' } },
    400,
    'user.current_password',
  ],
  ['A12 nothing to change', 'OrgDriver', 'PUT', '/v1/me/account', { user: {} }, 400, 'user'],
  ['A13 id not a uuid', 'SysAdmin', 'PUT', '/v1/users/profile', { user: { id: 'x', name: 'N' } }, 400, 'user.id'],
  ['A13 unknown user', 'SysAdmin', 'PUT', '/v1/users/profile', { user: { id: MISSING, name: 'N' } }, 400, 'user.id'],
  ['A14 per_page over 100', 'SysAdmin', 'GET', '/v1/admin/users?per_page=101', undefined, 400, 'query.per_page'],
  ['A14 unknown org', 'SysAdmin', 'GET', `/v1/admin/users?org_id=${MISSING}`, undefined, 400, 'query.org_id'],
  ['A15 missing org and role', 'SysAdmin', 'GET', '/v1/admin/users/by-role', undefined, 400, 'query.org_id'],
  [
    'A15 bad sort_by',
    'SysAdmin',
    'GET',
    () => `/v1/admin/users/by-role?org_id=${orgId}&role_name=OrgAdmin&sort_by=age`,
    undefined,
    400,
    'query.sort_by',
  ],
  [
    'A15 bad order',
    'SysAdmin',
    'GET',
    () => `/v1/admin/users/by-role?org_id=${orgId}&role_name=OrgAdmin&order=up`,
    undefined,
    400,
    'query.order',
  ],
  [
    'A15 role outside the list',
    'SysAdmin',
    'GET',
    () => `/v1/admin/users/by-role?org_id=${orgId}&role_name=SysAdmin`,
    undefined,
    400,
    'query.role_name',
  ],
  ['A16 id not a uuid', 'SysAdmin', 'GET', '/v1/admin/users/abc', undefined, 400, 'path.userID'],
  ['A16 unknown user', 'SysAdmin', 'GET', `/v1/admin/users/${MISSING}`, undefined, 404],
  ['A17 bad email', 'SysAdmin', 'DELETE', '/v1/admin/users', { user: { email: 'x' } }, 400, 'user.email'],
  ['A17 unknown user', 'SysAdmin', 'DELETE', '/v1/admin/users', { user: { email: 'nobody@b.co' } }, 404],
  ['A18 bad email', 'SysAdmin', 'GET', '/v1/admin/users/by-email/not-an-email', undefined, 400, 'path.email'],
  ['A18 unknown user', 'SysAdmin', 'GET', '/v1/admin/users/by-email/nobody%40b.co', undefined, 404],
  ['A19 page 0', 'OrgAdmin', 'GET', '/v1/org/users?page=0', undefined, 400, 'query.page'],
  ['A20 name of the wrong type', 'OrgAdmin', 'PUT', '/v1/org/me', { user: { name: 5 } }, 400, 'user.name'],
  [
    'A21 missing driver profile',
    'Driver',
    'PUT',
    '/v1/driver/me',
    { user: { user: { phone_number: 1 } } },
    400,
    'user.user.driver_profile',
  ],
  [
    'A21 stale version_rev',
    'Driver',
    'PUT',
    '/v1/driver/me',
    { user: { user: { driver_profile: { version_rev: '1-stale' } } } },
    409,
  ],
  [
    'A21 unknown service type',
    'Driver',
    'PUT',
    '/v1/driver/me',
    { user: { user: { driver_profile: { version_rev: '1-x', service_types: ['rocket'] } } } },
    400,
    'user.user.driver_profile.service_types[0]',
  ],
  [
    'A22 bad email',
    'OrgTransporter',
    'PUT',
    '/v1/transporter/me/email',
    { user: { user: { email: 'x' } } },
    400,
    'user.user.email',
  ],
  [
    'A22 taken email',
    'OrgTransporter',
    'PUT',
    '/v1/transporter/me/email',
    { user: { user: { email: ADMIN.email, current_password: PASSWORD } } },
    409,
  ],
  [
    'A22 without the current password',
    'OrgTransporter',
    'PUT',
    '/v1/transporter/me/email',
    { user: { user: { email: 'somebody.else@example.com' } } },
    400,
    'user.user.current_password',
  ],
  [
    'A22 wrong current password',
    'OrgTransporter',
    'PUT',
    '/v1/transporter/me/email',
    { user: { user: { email: 'somebody.else@example.com', current_password: 'not-it-at-all' } } },
    400,
    'user.user.current_password',
  ],
  ['A23 id not a uuid', 'OrgAdmin', 'GET', '/v1/org/users/abc', undefined, 400, 'path.userID'],
  ['A23 another organisation', 'OrgAdmin', 'GET', () => `/v1/org/users/${ids.Driver}`, undefined, 404],
  ['A24 nothing to set', 'Merchant', 'PUT', '/v1/merchant/me', { user: {} }, 400, 'user'],
  ['A24 invited, not self-registered', 'Merchant', 'PUT', '/v1/merchant/me', { user: { name: 'N' } }, 403],
  [
    'A25 unknown user',
    'SysAdmin',
    'POST',
    '/v1/admin/users/assign-organisation',
    { user: { id: MISSING, org_id: MISSING } },
    400,
    'user.id',
  ],
  [
    'A25 unknown org',
    'SysAdmin',
    'POST',
    '/v1/admin/users/assign-organisation',
    () => ({ user: { id: ids.Driver, org_id: MISSING } }),
    400,
    'user.org_id',
  ],
  [
    'A25 user already has an org',
    'SysAdmin',
    'POST',
    '/v1/admin/users/assign-organisation',
    () => ({ user: { id: ids.OrgAdmin, org_id: orgId } }),
    409,
  ],
  ['A26 unknown user', 'SysAdmin', 'POST', `/v1/admin/users/${MISSING}/confirm`, {}, 404],
  ['A26 already confirmed', 'SysAdmin', 'POST', () => `/v1/admin/users/${ids.OrgAdmin}/confirm`, {}, 409],
];

describe('bad input answers the contract', () => {
  it.each(cases)('%s', async (_label, as, method, path, body, status, field) => {
    const resolvedPath = typeof path === 'function' ? path() : path;
    const resolvedBody = typeof body === 'function' ? (body as () => unknown)() : body;
    const response = await api.call(method, resolvedPath, { token: as ? tokens[as] : undefined, body: resolvedBody });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const problem = response.body as { code: string; errors: { path: string }[] };
    expect(problem.code).toBe(
      { 400: 'validation_failed', 403: 'forbidden', 404: 'not_found', 409: 'conflict' }[status] ?? problem.code,
    );
    if (field) expect(problem.errors.map((e) => e.path)).toContain(field);
  });
});

describe('roles an operation refuses', () => {
  const accountRoutes = (routes as readonly RouteDef[]).filter((r) => r.area === 'accounts' && Array.isArray(r.access));
  const held = ['SysAdmin', 'OrgAdmin', 'OrgDriver', 'OrgTransporter', 'Merchant', 'Driver'] as const;

  it('answer 403 for every role outside the access rule, and 401 without a token', async () => {
    let checked = 0;
    for (const route of accountRoutes) {
      const path = route.path.replace('{userID}', MISSING).replace('{email}', 'a%40b.co');
      for (const role of held.filter((r) => !accessAllows(route.access, { kind: 'user', roles: [r] }))) {
        const response = await api.call(route.method, path, {
          token: tokens[role],
          body: route.method === 'GET' ? undefined : {},
        });
        expect(response.status, `${route.id} as ${role}`).toBe(403);
        checked++;
      }
      expect(
        (await api.call(route.method, path, { body: route.method === 'GET' ? undefined : {} })).status,
        route.id,
      ).toBe(401);
    }
    expect(checked).toBeGreaterThan(60);
  });
});
