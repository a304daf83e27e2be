/** The directory (A14, A15, A19) and the self-service changes (A12, A13, A20–A22, A24, A25, X1) over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import { type Client, client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let orgId: string;
const PASSWORD = 'a-good-long-password';
const tag = Math.random().toString(36).slice(2, 7);

async function member(
  name: string,
  role: Role,
  email = `${name.toLowerCase().replace(/\s/g, '.')}.${tag}@example.com`,
) {
  await api.post('/v1/admin/invitations', { user: { email, org_id: orgId, role_id: ROLES[role] } }, admin);
  const outbox = await api.get<{ messages: { data: Record<string, string> }[] }>(`/_local/outbox?to=${email}`);
  await api.post('/v1/auth/accept-invitation', {
    user: { name, password: PASSWORD, invitation_token: outbox.body.messages[0]!.data['invitation_token'] },
  });
  return { email, ...(await loginAs(api, email, PASSWORD)) };
}

type Listed = { id: string; email: string; name: string; roles_name?: string[]; invitation_status?: string | null };
type ListReply = { users: Listed[]; meta: Record<string, unknown> };

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgId = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Directory', kind: 'transporter' }, admin))
    .body.id;
});
afterAll(() => host?.stop());

describe('A15 users of one role, sorted', () => {
  beforeAll(async () => {
    for (const name of ['Carla Zed', 'Anna Young', 'Bert Xu']) await member(name, 'OrgDriver');
    // A pending invitation is listed with its status; its token is never shown.
    await api.post(
      '/v1/admin/invitations',
      { user: { email: `pending.${tag}@example.com`, org_id: orgId, role_id: ROLES.OrgDriver } },
      admin,
    );
  });

  const byRole = (query: string) =>
    api.get<ListReply>(`/v1/admin/users/by-role?org_id=${orgId}&role_name=OrgDriver&${query}`, admin);

  it('sorts by name and email both ways, newest first by default', async () => {
    const names = (await byRole('sort_by=name&order=asc')).body.users.map((u) => u.name);
    expect(names).toEqual(['', 'Anna Young', 'Bert Xu', 'Carla Zed']);
    expect((await byRole('sort_by=name&order=desc')).body.users.map((u) => u.name)).toEqual([...names].reverse());
    const emails = (await byRole('sort_by=email&order=asc')).body.users.map((u) => u.email);
    expect(emails).toEqual([...emails].sort());
    const newest = (await byRole('')).body.users;
    expect(newest[0]!.email).toBe(`pending.${tag}@example.com`);
    expect(newest[0]).toMatchObject({
      roles_name: ['OrgDriver'],
      invitation_token: null,
      invitation_status: 'pending',
      confirmed_at: null,
    });
  });

  it('pages with totals from the maintained counter', async () => {
    const first = await byRole('sort_by=name&order=asc&per_page=3');
    expect(first.body.meta).toMatchObject({
      page: 1,
      per_page: 3,
      total: 4,
      total_records: 4,
      total_pages: 2,
      has_next: true,
      has_previous: false,
    });
    const second = await byRole('sort_by=name&order=asc&per_page=3&page=2');
    expect(second.body.users.map((u) => u.name)).toEqual(['Carla Zed']);
    expect(second.body.meta).toMatchObject({ page: 2, has_next: false, has_previous: true });
    const viaToken = await byRole(`sort_by=name&order=asc&per_page=3&page_token=${first.body.meta['next_page_token']}`);
    expect(viaToken.body.users).toEqual(second.body.users);
  });
});

describe('A14 search and filter', () => {
  it('finds by email or name prefix, case-insensitively, and filters by organisation', async () => {
    const found = await member('Zoltan Quist', 'OrgTransporter', `zq.${tag}@example.com`);
    const byName = await api.get<ListReply>('/v1/admin/users?search=ZOLTAN', admin);
    expect(byName.body.users.map((u) => u.id)).toContain(found.user.id);
    const byEmail = await api.get<ListReply>(`/v1/admin/users?search=ZQ.${tag}`, admin);
    expect(byEmail.body.users.map((u) => u.id)).toEqual([found.user.id]);
    expect(byEmail.body.meta).toMatchObject({ total: 1 });
    const otherOrg = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Else', kind: 'merchant' }, admin)
    ).body.id;
    expect((await api.get<ListReply>(`/v1/admin/users?search=zoltan&org_id=${otherOrg}`, admin)).body.users).toEqual(
      [],
    );
    const inOrg = await api.get<ListReply>(`/v1/admin/users?org_id=${orgId}&per_page=100`, admin);
    expect(inOrg.body.users.every((u) => u.email.includes(tag))).toBe(true);
    expect(inOrg.body.meta['total']).toBe(inOrg.body.users.length);
    const all = await api.get<ListReply>('/v1/admin/users?per_page=2', admin);
    expect(all.body.users).toHaveLength(2);
    expect(all.body.meta['total']).toBeGreaterThanOrEqual(inOrg.body.users.length + 1);
  });
});

describe('self-service', () => {
  it('A12 changes name and password with the current password', async () => {
    const me = await member('Pat Change', 'OrgDriver');
    expect(
      (
        await api.put(
          '/v1/me/account',
          { user: { name: 'Pat Changed', current_password: PASSWORD, password: 'brand-new-password' } },
          me.bearer_token,
        )
      ).status,
    ).toBe(200);
    const again = await loginAs(api, me.email, 'brand-new-password');
    expect(again.user).toMatchObject({ name: 'Pat Changed' });
  });

  it('A13 lets an OrgAdmin edit its own members only; A20 edits oneself', async () => {
    const orgAdmin = await member('Olga Admin', 'OrgAdmin');
    const driver = await member('Dan Driver', 'OrgDriver');
    expect(
      (
        await api.put(
          '/v1/users/profile',
          { user: { id: driver.user.id, name: 'Daniel Driver', phone_number: 4412345 } },
          orgAdmin.bearer_token,
        )
      ).status,
    ).toBe(200);
    const read = await api.get<{ user: { name: string } }>(`/v1/org/users/${driver.user.id}`, orgAdmin.bearer_token);
    expect(read.body.user.name).toBe('Daniel Driver');
    const foreignOrg = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'F', kind: 'merchant' }, admin)
    ).body.id;
    const foreignEmail = `f.${tag}@example.com`;
    await api.post('/v1/admin/invitations', { user: { email: foreignEmail, org_id: foreignOrg } }, admin);
    const foreign = await api.get<{ id: string }>(`/v1/admin/users/by-email/${foreignEmail}`, admin);
    // A foreign id in a body is a bad input, like an unknown one (contract section 3): 400 at user.id.
    const foreignEdit = await api.put(
      '/v1/users/profile',
      { user: { id: foreign.body.id, name: 'Hacked' } },
      orgAdmin.bearer_token,
    );
    expect(foreignEdit.status).toBe(400);
    expect(foreignEdit.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'user.id' }] });
    expect((await api.get<{ user: { name: string } }>(`/v1/admin/users/${foreign.body.id}`, admin)).status).toBe(200);
    expect((await api.put('/v1/org/me', { user: { phone_number: 999 } }, orgAdmin.bearer_token)).body).toMatchObject({
      code: 'success',
    });
    expect(
      (await api.get<{ user: { phone_number: number } }>('/v1/me', orgAdmin.bearer_token)).body.user.phone_number,
    ).toBe(999);
  });

  it('A21 moves the driver profile on only from the current version_rev', async () => {
    const driver = await member('Vera Version', 'OrgDriver');
    const rev = (await api.get<{ user: { driver_profile: { version_rev: string } } }>('/v1/me', driver.bearer_token))
      .body.user.driver_profile.version_rev;
    const body = (version_rev: string) => ({
      user: { user: { phone_number: 123, driver_profile: { version_rev, service_types: ['van_1.7m', 'car'] } } },
    });
    const [a, b] = await Promise.all([
      api.put('/v1/driver/me', body(rev), driver.bearer_token),
      api.put('/v1/driver/me', body(rev), driver.bearer_token),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = (a.status === 200 ? a : b).body as {
      driver_profile: { version_rev: string; service_types: string[] };
    };
    expect(winner.driver_profile.version_rev).toMatch(/^2-/);
    expect(winner.driver_profile.service_types).toEqual(['van_1.7m', 'car']);
    expect((await api.put('/v1/driver/me', body(rev), driver.bearer_token)).status).toBe(409);
    expect((await api.put('/v1/driver/me', body(winner.driver_profile.version_rev), driver.bearer_token)).status).toBe(
      200,
    );
  });

  it('A22 changes a transporter email and frees the old address', async () => {
    const transporter = await member('Tom Transport', 'OrgTransporter');
    const newEmail = `tom.moved.${tag}@example.com`;
    expect(
      (
        await api.put(
          '/v1/transporter/me/email',
          { user: { user: { email: newEmail, current_password: PASSWORD } } },
          transporter.bearer_token,
        )
      ).status,
    ).toBe(200);
    // The new address is unconfirmed until confirmed (here by SysAdmin, A26).
    expect((await api.post(`/v1/admin/users/${transporter.user.id}/confirm`, {}, admin)).status).toBe(200);
    await loginAs(api, newEmail, PASSWORD);
    expect((await api.post('/v1/auth/login', { user: { email: transporter.email, password: PASSWORD } })).status).toBe(
      401,
    );
    expect(
      (
        await api.post('/v1/auth/register-driver', {
          user: { email: transporter.email, password: PASSWORD, name: 'Reuse' },
        })
      ).status,
    ).toBe(201);
  });

  it('X1 registers a merchant with its organisation; A24 then sets name and password', async () => {
    const email = `shop.${tag}@example.com`;
    const registered = await api.post<{ org_id: string; user_id: string }>('/v1/auth/register-merchant', {
      user: { email, password: PASSWORD, name: 'Corner Shop', phone_number: 5550100 },
    });
    expect(registered.status).toBe(201);
    expect(
      (await api.get<{ kind: string; name: string }>(`/v1/admin/organisations/${registered.body.org_id}`, admin)).body,
    ).toMatchObject({ kind: 'merchant', name: 'Corner Shop' });
    await api.post(`/v1/admin/users/${registered.body.user_id}/confirm`, {}, admin);
    const merchant = await loginAs(api, email, PASSWORD);
    expect(merchant.user).toMatchObject({ roles: ['Merchant'], org_id: registered.body.org_id });
    expect(
      (
        await api.put(
          '/v1/merchant/me',
          { user: { name: 'Corner Shop Ltd', current_password: PASSWORD, password: 'merchant-new-password' } },
          merchant.bearer_token,
        )
      ).status,
    ).toBe(200);
    expect((await loginAs(api, email, 'merchant-new-password')).user).toMatchObject({ name: 'Corner Shop Ltd' });
  });

  it('A25 assigns an organisation to a freelance driver once', async () => {
    const email = `free.${tag}@example.com`;
    const registered = await api.post<{ user_id: string }>('/v1/auth/register-driver', {
      user: { email, password: PASSWORD, name: 'Free Lance' },
    });
    const assign = () =>
      api.post('/v1/admin/users/assign-organisation', { user: { id: registered.body.user_id, org_id: orgId } }, admin);
    expect((await assign()).status).toBe(200);
    expect((await api.get<{ org_id: string }>(`/v1/admin/users/${registered.body.user_id}`, admin)).body.org_id).toBe(
      orgId,
    );
    expect((await assign()).status).toBe(409);
  });
});
