/**
 * Issue 3's walk over HTTP against the local host: self-registration and confirmation, invitations and tenancy,
 * password reset, bulk invitation, deletion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;

type Outbox = { messages: { to: string; kind: string; data: Record<string, string>; text: string }[] };
const lastMail = async (to: string, kind: string) => {
  const outbox = await api.get<Outbox>(`/_local/outbox?to=${encodeURIComponent(to)}`);
  const found = outbox.body.messages.find((m) => m.kind === kind);
  if (!found) throw new Error(`no ${kind} mail for ${to}`);
  return found;
};
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const PASSWORD = 'a-good-long-password';

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
});
afterAll(() => host?.stop());

describe('a freelance driver registers and confirms', () => {
  it('register → security code from the outbox → verify → log in', async () => {
    const email = unique('driver');
    const registered = await api.post('/v1/auth/register-driver', {
      user: { email, password: PASSWORD, name: 'Dee Driver', phone_number: 6591234567 },
    });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ message: expect.any(String) });
    expect((await lastMail(email, 'welcome')).text).toContain('security code');

    const early = await api.post('/v1/auth/login', { user: { email, password: PASSWORD } });
    expect(early.status).toBe(403);
    expect(early.body).toMatchObject({ code: 'account_not_confirmed' });

    expect((await api.post('/v1/auth/security-code', { user: { email, phone_number: '+65 9123 4567' } })).status).toBe(
      202,
    );
    const code = (await lastMail(email, 'security_code')).data['security_code']!;
    expect(code).toMatch(/^\d{6}$/);
    const wrong = await api.post('/v1/auth/verify-security-code', {
      user: { email, security_code: code === '000000' ? '111111' : '000000' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ errors: [{ path: 'user.security_code' }] });
    expect((await api.post('/v1/auth/verify-security-code', { user: { email, security_code: code } })).status).toBe(
      200,
    );
    // The used code is 410 whatever the account's state, also now that it confirmed the account (contract X8).
    const again = await api.post('/v1/auth/verify-security-code', { user: { email, security_code: code } });
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ code: 'gone' });
    // Any other code on the confirmed account: 409.
    const other = code === '222222' ? '333333' : '222222';
    expect((await api.post('/v1/auth/verify-security-code', { user: { email, security_code: other } })).status).toBe(
      409,
    );

    const session = await loginAs(api, email, PASSWORD);
    const me = await api.get<{ user: Record<string, unknown> }>('/v1/me', session.bearer_token);
    expect(me.body.user).toMatchObject({
      email,
      roles: ['Driver'],
      org_id: null,
      phone_number: 6591234567,
      confirmed_at: expect.any(String),
    });
    expect(me.body.user['driver_profile']).toMatchObject({ version_rev: expect.stringMatching(/^1-/) });
  });

  it('a replaced code answers 410, and five wrong tries void the code', async () => {
    const email = unique('driver');
    await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Re Placed' } });
    await api.post('/v1/auth/security-code', { user: { email } });
    const first = (await lastMail(email, 'security_code')).data['security_code']!;
    await api.post('/v1/auth/security-code', { user: { email } });
    const second = (await lastMail(email, 'security_code')).data['security_code']!;
    if (first !== second)
      expect((await api.post('/v1/auth/verify-security-code', { user: { email, security_code: first } })).status).toBe(
        410,
      );
    const wrongCode = second === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) {
      expect(
        (await api.post('/v1/auth/verify-security-code', { user: { email, security_code: wrongCode } })).status,
      ).toBe(400);
    }
    const voided = await api.post('/v1/auth/verify-security-code', { user: { email, security_code: second } });
    expect(voided.status).toBe(410);
    expect(voided.body).toMatchObject({ code: 'gone' });
  });

  it('refuses a taken address with 409 and bad input with field paths', async () => {
    const email = unique('twice');
    const body = { user: { email, password: PASSWORD, name: 'Twice' } };
    const both = await Promise.all([
      api.post('/v1/auth/register-driver', body),
      api.post('/v1/auth/register-driver', { user: { ...body.user, email: email.toUpperCase() } }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const bad = await api.post('/v1/auth/register-driver', {
      user: { email: 'nope', password: 'short', name: '', phone_number: 'abc' },
    });
    expect(bad.status).toBe(400);
    const paths = (bad.body as { errors: { path: string }[] }).errors.map((e) => e.path).sort();
    expect(paths).toEqual(['user.email', 'user.name', 'user.password', 'user.phone_number']);
    expect((await api.post('/v1/auth/register-driver', {})).body).toMatchObject({
      errors: [{ path: 'user', message: 'is required' }],
    });
  });
});

describe('organisations invite their people', () => {
  let orgA: string;
  let orgB: string;
  let orgAdmin: string;
  let foreignUserId: string;

  beforeAll(async () => {
    orgA = await newOrganisation(api, admin, 'Org A');
    orgB = await newOrganisation(api, admin, 'Org B');
  });

  it('admin invites an OrgAdmin → accepted → OrgAdmin invites a driver → lists own users only → a foreign user is 404', async () => {
    const adminEmail = unique('orgadmin');
    const invited = await api.post(
      '/v1/admin/invitations',
      { user: { email: adminEmail, org_id: orgA, role_id: ROLES.OrgAdmin } },
      admin,
    );
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ status: 'invited' });
    const token = (await lastMail(adminEmail, 'invitation')).data['invitation_token']!;
    const accepted = await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Ada Admin', password: PASSWORD, invitation_token: token },
    });
    expect(accepted.body).toEqual({ status: 'accepted' });
    expect(
      (
        await api.post('/v1/auth/accept-invitation', {
          user: { name: 'Again', password: PASSWORD, invitation_token: token },
        })
      ).status,
    ).toBe(410);
    orgAdmin = (await loginAs(api, adminEmail, PASSWORD)).bearer_token;

    const driverEmail = unique('orgdriver');
    expect((await api.post('/v1/org-admin/invitations', { user: { email: driverEmail } }, orgAdmin)).status).toBe(201);
    const driverToken = (await lastMail(driverEmail, 'invitation')).data['invitation_token']!;
    await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Otto Driver', password: PASSWORD, invitation_token: driverToken },
    });
    const driver = await loginAs(api, driverEmail, PASSWORD);
    expect(driver.user).toMatchObject({ roles: ['OrgDriver'], org_id: orgA });

    const foreignEmail = unique('foreign');
    await api.post('/v1/admin/invitations', { user: { email: foreignEmail, org_id: orgB } }, admin);
    const foreign = await api.get<{ id: string }>(
      `/v1/admin/users/by-email/${encodeURIComponent(foreignEmail)}`,
      admin,
    );
    foreignUserId = foreign.body.id;

    const own = await api.get<{ users: { email: string; org_id: string }[]; meta: { total: number } }>(
      '/v1/org/users',
      orgAdmin,
    );
    expect(own.status).toBe(200);
    expect(own.body.users.map((u) => u.email).sort()).toEqual([adminEmail, driverEmail].sort());
    expect(own.body.meta.total).toBe(2);
    expect((await api.get(`/v1/org/users/${foreignUserId}`, orgAdmin)).status).toBe(404);
    const mine = await api.get<{ user: { email: string } }>(`/v1/org/users/${driver.user.id}`, orgAdmin);
    expect(mine.body.user.email).toBe(driverEmail);
  });

  it('re-inviting replaces the token (the old one is 410); unknown org or role is 400; wrong role is 403', async () => {
    const email = unique('again');
    await api.post('/v1/admin/invitations', { user: { email, org_id: orgA } }, admin);
    const first = (await lastMail(email, 'invitation')).data['invitation_token']!;
    await api.post('/v1/admin/invitations', { user: { email, org_id: orgA } }, admin);
    const second = (await lastMail(email, 'invitation')).data['invitation_token']!;
    expect(second).not.toBe(first);
    expect(
      (
        await api.post('/v1/auth/accept-invitation', {
          user: { name: 'X', password: PASSWORD, invitation_token: first },
        })
      ).status,
    ).toBe(410);
    expect(
      (
        await api.post('/v1/auth/accept-invitation', {
          user: { name: 'X', password: PASSWORD, invitation_token: 'never-issued' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api.post('/v1/auth/accept-invitation', {
          user: { name: 'X', password: PASSWORD, invitation_token: second },
        })
      ).status,
    ).toBe(200);

    const unknownOrg = await api.post(
      '/v1/admin/invitations',
      { user: { email: unique('x'), org_id: '00000000-0000-4000-8000-000000000000' } },
      admin,
    );
    expect(unknownOrg.body).toMatchObject({ status: 400, errors: [{ path: 'user.org_id' }] });
    const unknownRole = await api.post(
      '/v1/admin/invitations',
      { user: { email: unique('x'), org_id: orgA, role_id: '00000000-0000-4000-8000-000000000000' } },
      admin,
    );
    expect(unknownRole.body).toMatchObject({ status: 400, errors: [{ path: 'user.role_id' }] });
    expect((await api.post('/v1/org-admin/invitations', { user: { email: unique('x') } }, admin)).status).toBe(403);
    expect((await api.post('/v1/admin/invitations', { user: { email: unique('x'), org_id: orgA } })).status).toBe(401);
  });

  it('bulk-invites with duplicates and bad addresses, never aborting the rest', async () => {
    const good = [unique('bulk'), unique('bulk'), unique('bulk')];
    const taken = ADMIN.email;
    const response = await api.post<{
      invited: string[];
      failed: string[];
      failures: { email: string; reason: string }[];
    }>(
      '/v1/admin/invitations/bulk',
      {
        user: {
          emails: [...good, 'not-an-email', good[0]!.toUpperCase(), taken],
          org_id: orgA,
          role_id: ROLES.OrgDriver,
        },
      },
      admin,
    );
    expect(response.status).toBe(200);
    expect(response.body.invited.sort()).toEqual([...good].sort());
    expect(response.body.failed.sort()).toEqual(['not-an-email', good[0]!.toUpperCase(), taken].sort());
    expect(response.body.failures.find((f) => f.email === 'not-an-email')?.reason).toBe('not an email address');
    const tooMany = await api.post(
      '/v1/admin/invitations/bulk',
      { user: { emails: Array.from({ length: 501 }, (_, i) => `a${i}@b.co`), org_id: orgA } },
      admin,
    );
    expect(tooMany.body).toMatchObject({ status: 400, errors: [{ path: 'user.emails' }] });
  });
});

describe('passwords and deletion', () => {
  it('forgot → reset from the outbox → old password fails, new works, token single use', async () => {
    const email = unique('forgot');
    await api.post(
      '/v1/admin/invitations',
      {
        user: {
          email,
          org_id: (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'P', kind: 'merchant' }, admin))
            .body.id,
        },
      },
      admin,
    );
    const token = (await lastMail(email, 'invitation')).data['invitation_token']!;
    await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Forgetful', password: PASSWORD, invitation_token: token },
    });
    const session = await loginAs(api, email, PASSWORD);

    const known = await api.post('/v1/auth/password/forgot', { user: { email } });
    const unknown = await api.post('/v1/auth/password/forgot', { user: { email: unique('nobody') } });
    expect(known.status).toBe(202);
    expect({ ...known.body }).toEqual({ ...unknown.body });
    const reset = (await lastMail(email, 'password_reset')).data['reset_password_token']!;
    expect(
      (
        await api.post('/v1/auth/password/reset', {
          user: { password: 'another-long-password', reset_password_token: reset },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api.post('/v1/auth/password/reset', {
          user: { password: 'third-long-password', reset_password_token: reset },
        })
      ).status,
    ).toBe(410);
    expect((await api.post('/v1/auth/login', { user: { email, password: PASSWORD } })).status).toBe(401);
    expect((await api.post('/v1/auth/refresh', { refresh_token: session.refresh_token })).status).toBe(401);
    await loginAs(api, email, 'another-long-password');
  });

  it('delete → login fails, A16 still reads the deleted user, the address registers again', async () => {
    const email = unique('gone');
    await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Soon Gone' } });
    const user = await api.get<{ id: string }>(`/v1/admin/users/by-email/${encodeURIComponent(email)}`, admin);
    await api.post(`/v1/admin/users/${user.body.id}/confirm`, {}, admin);
    expect((await api.post(`/v1/admin/users/${user.body.id}/confirm`, {}, admin)).status).toBe(409);
    const session = await loginAs(api, email, PASSWORD);

    const deleted = await api.delete('/v1/admin/users', { user: { email } }, admin);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ code: 'success' });
    expect((await api.post('/v1/auth/login', { user: { email, password: PASSWORD } })).status).toBe(401);
    expect((await api.get('/v1/me', session.bearer_token)).status).toBe(401);
    const read = await api.get<{ email: string; deleted_at: string }>(`/v1/admin/users/${user.body.id}`, admin);
    expect(read.body.email).toMatch(new RegExp(`^deleted-\\d+-${email.replace('.', '\\.')}$`));
    expect(read.body.deleted_at).toEqual(expect.any(String));
    expect(
      (await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Back Again' } })).status,
    ).toBe(201);
  });
});

describe('wrong passwords', () => {
  it('after ten for one address, answer 429 with Retry-After until the window ends; other addresses are untouched', async () => {
    const { LOGIN_FAILURE_LIMIT, LOGIN_WINDOW_SECONDS } = await import('../../shared/auth/throttle.ts');
    const { resetClock, setClock } = await import('../../shared/clock.ts');
    const org = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Throttle', kind: 'merchant' }, admin)
    ).body.id;
    const { email, password } = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const attempt = (password: string, address = email) =>
      api.post('/v1/auth/login', { user: { email: address, password } });
    for (let i = 0; i < LOGIN_FAILURE_LIMIT; i++) expect((await attempt('wrong-password-guess')).status).toBe(401);
    const refused = await attempt(password);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(LOGIN_WINDOW_SECONDS - 60);
    expect((await attempt(ADMIN.password, ADMIN.email)).status).toBe(200);
    // An unknown address is throttled the same way (the answers must not tell the two apart).
    const nobody = unique('nobody');
    for (let i = 0; i < LOGIN_FAILURE_LIMIT; i++) expect((await attempt('guess-guess-guess', nobody)).status).toBe(401);
    expect((await attempt('guess-guess-guess', nobody)).status).toBe(429);
    try {
      setClock(() => Date.now() + (LOGIN_WINDOW_SECONDS + 1) * 1000);
      expect((await attempt(password)).status).toBe(200);
    } finally {
      resetClock();
    }
    // A successful login clears the count: nine more failures are still 401s.
    for (let i = 0; i < LOGIN_FAILURE_LIMIT - 1; i++) expect((await attempt('wrong-again-wrong')).status).toBe(401);
    expect((await attempt(password)).status).toBe(200);
  }, 60_000);
});

describe('an OrgTransporter (A6)', () => {
  it('invites a user into its own organisation, who joins it as an OrgDriver', async () => {
    const org = (
      await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Carrier', kind: 'transporter' }, admin)
    ).body.id;
    const transporter = await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org);
    const email = unique('carrier-driver');
    const invited = await api.post('/v1/org-transporter/invitations', { user: { email } }, transporter.token);
    expect(invited.status).toBe(201);
    const token = (await lastMail(email, 'invitation')).data['invitation_token']!;
    const accepted = await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Carrier Driver', password: PASSWORD, invitation_token: token },
    });
    expect(accepted.status).toBeLessThan(300);
    const session = await loginAs(api, email, PASSWORD);
    expect(session.user).toMatchObject({ org_id: org });
    expect((await api.post('/v1/org-transporter/invitations', { user: { email: unique('x') } }, admin)).status).toBe(
      403,
    );
  });
});
