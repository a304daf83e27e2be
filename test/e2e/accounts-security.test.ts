/**
 * Issue 28's account holes over HTTP (item 5 and the account parts of item 7): profile changes that need the current
 * password and end the other sessions, the e-mail change that tells the old address and leaves the new one
 * unconfirmed, the login lockout counted before the password is checked, A10 throttled per address with the same
 * work for any address, and invitations that neither enumerate nor let a lesser inviter re-invite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { RESET_MAIL_LIMIT } from '../../shared/accounts/password-reset.ts';
import { ROLES } from '../../shared/auth/roles.ts';
import { LOGIN_FAILURE_LIMIT } from '../../shared/auth/throttle.ts';
import { type Tally, tallyObservers } from '../../shared/db/capacity.ts';
import { type Client, client, invitedMember, loginAs, newOrganisation } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;

type Mail = { to: string; kind: string; data: Record<string, string>; text: string };
const mails = async (to: string) =>
  (await api.get<{ messages: Mail[] }>(`/_local/outbox?to=${encodeURIComponent(to)}`)).body.messages;
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const PASSWORD = 'a-good-long-password';

type Session = { bearer_token: string; refresh_token: string };
const refreshes = async (session: Session) =>
  (await api.post('/v1/auth/refresh', { refresh_token: session.refresh_token })).status;
const reads = async (bearer: string) => (await api.get('/v1/me', bearer)).status;

beforeAll(async () => {
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
});
afterAll(() => host?.stop());

/** A self-registered merchant (X1), confirmed, with two sessions. */
async function merchant() {
  const email = unique('shop');
  const registered = await api.post<{ user_id: string }>('/v1/auth/register-merchant', {
    user: { email, password: PASSWORD, name: 'Shop', phone_number: 5550100 },
  });
  await api.post(`/v1/admin/users/${registered.body.user_id}/confirm`, {}, admin);
  return { email, first: await loginAs(api, email, PASSWORD), second: await loginAs(api, email, PASSWORD) };
}

describe('A24 a merchant password change', () => {
  it('needs the current password: missing or wrong is a 400 at user.current_password, and nothing changes', async () => {
    const { email, first } = await merchant();
    for (const user of [
      { password: 'taken-over-password' },
      { password: 'taken-over-password', current_password: 'not-the-password' },
    ]) {
      const refused = await api.put('/v1/merchant/me', { user }, first.bearer_token);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'user.current_password' }],
      });
    }
    expect((await api.post('/v1/auth/login', { user: { email, password: 'taken-over-password' } })).status).toBe(401);
    await loginAs(api, email, PASSWORD);
    // A name alone needs no password.
    expect((await api.put('/v1/merchant/me', { user: { name: 'Shop Two' } }, first.bearer_token)).status).toBe(200);
  });

  it('ends every other session and answers the caller a new one', async () => {
    const { email, first, second } = await merchant();
    const changed = await api.put<Session & { code: string }>(
      '/v1/merchant/me',
      { user: { name: 'Shop Ltd', current_password: PASSWORD, password: 'merchant-new-password' } },
      first.bearer_token,
    );
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      code: 'success',
      bearer_token: expect.any(String),
      refresh_token: expect.any(String),
      bearer_token_expired_at: expect.any(Number),
    });
    expect(await reads(second.bearer_token)).toBe(401);
    expect(await refreshes(second)).toBe(401);
    expect(await reads(first.bearer_token)).toBe(401);
    expect(await reads(changed.body.bearer_token)).toBe(200);
    expect(await refreshes(changed.body)).toBe(200);
    expect((await loginAs(api, email, 'merchant-new-password')).user).toMatchObject({ name: 'Shop Ltd' });
  });
});

describe('A12 a password change', () => {
  it('ends every other session and refresh family; the reply carries the caller’s new session', async () => {
    const org = await newOrganisation(api, admin, 'Sessions');
    const member = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, org);
    const other = await loginAs(api, member.email, member.password);
    const changed = await api.put<Session & { message: string }>(
      '/v1/me/account',
      { user: { current_password: member.password, password: 'a-brand-new-password' } },
      member.token,
    );
    expect(changed.status).toBe(200);
    expect(changed.body.bearer_token).toEqual(expect.any(String));
    expect(await reads(other.bearer_token)).toBe(401);
    expect(await refreshes(other)).toBe(401);
    expect(await refreshes({ bearer_token: member.token, refresh_token: member.refresh_token })).toBe(401);
    expect(await reads(member.token)).toBe(401);
    expect(await reads(changed.body.bearer_token)).toBe(200);
    expect(await refreshes(changed.body)).toBe(200);
    // A name alone changes no credential: the sessions live on and the reply has no tokens.
    const renamed = await api.put('/v1/me/account', { user: { name: 'Renamed' } }, changed.body.bearer_token);
    expect(renamed.status).toBe(200);
    expect(renamed.body).not.toHaveProperty('bearer_token');
    expect(await reads(changed.body.bearer_token)).toBe(200);
  });
});

describe('A22 an e-mail change', () => {
  it('needs the current password (400 at user.user.current_password) and changes nothing without it', async () => {
    const org = await newOrganisation(api, admin, 'Mail change');
    const transporter = await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org);
    const target = unique('attacker');
    for (const user of [{ email: target }, { email: target, current_password: 'guessed-password' }]) {
      const refused = await api.put('/v1/transporter/me/email', { user: { user } }, transporter.token);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'user.user.current_password' }],
      });
    }
    const me = await api.get<{ user: { email: string } }>('/v1/me', transporter.token);
    expect(me.body.user.email).toBe(transporter.email);
    expect(await mails(transporter.email)).not.toContainEqual(expect.objectContaining({ kind: 'email_changed' }));
  });

  it('tells the old address, and leaves the new one unconfirmed until its owner confirms it', async () => {
    const org = await newOrganisation(api, admin, 'Mail change');
    const transporter = await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org);
    const moved = unique('moved');
    const changed = await api.put(
      '/v1/transporter/me/email',
      { user: { user: { email: moved, current_password: transporter.password } } },
      transporter.token,
    );
    expect(changed.status).toBe(200);
    const told = (await mails(transporter.email)).filter((m) => m.kind === 'email_changed');
    expect(told).toHaveLength(1);
    expect(told[0]!.text).toContain(moved);
    const me = await api.get<{ user: { email: string; confirmed_at: string | null } }>('/v1/me', transporter.token);
    expect(me.body.user).toMatchObject({ email: moved, confirmed_at: null });
    // Nobody has shown the new address is theirs: no login with it until a code sent there confirms it.
    const early = await api.post('/v1/auth/login', { user: { email: moved, password: transporter.password } });
    expect(early.status).toBe(403);
    expect(early.body).toMatchObject({ code: 'account_not_confirmed' });
    expect((await api.post('/v1/auth/security-code', { user: { email: moved } })).status).toBe(202);
    const code = (await mails(moved)).find((m) => m.kind === 'security_code')!.data['security_code'];
    expect(
      (await api.post('/v1/auth/verify-security-code', { user: { email: moved, security_code: code } })).status,
    ).toBe(200);
    await loginAs(api, moved, transporter.password);
  });
});

describe('the wrong-password lockout', () => {
  it('checks at most ten of many concurrent wrong passwords for one address; the rest are 429', async () => {
    const org = await newOrganisation(api, admin, 'Lockout');
    const { email } = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => api.post('/v1/auth/login', { user: { email, password: 'wrong-guess-guess' } })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(LOGIN_FAILURE_LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - LOGIN_FAILURE_LIMIT);
  }, 60_000);
});

describe('A10 forgotten password', () => {
  it(`mails one address at most ${RESET_MAIL_LIMIT} times a window; the requests beyond get the same answer`, async () => {
    const email = unique('forgetful');
    await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Forgetful' } });
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await api.post('/v1/auth/password/forgot', { user: { email } }));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(202));
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect((await mails(email)).filter((m) => m.kind === 'password_reset')).toHaveLength(RESET_MAIL_LIMIT);
    // Another address is counted on its own.
    const other = unique('other');
    await api.post('/v1/auth/register-driver', { user: { email: other, password: PASSWORD, name: 'Other' } });
    await api.post('/v1/auth/password/forgot', { user: { email: other } });
    expect((await mails(other)).filter((m) => m.kind === 'password_reset')).toHaveLength(1);
  });

  it('mails a new link after the previous token’s record has expired away (TTL)', async () => {
    const email = unique('returning');
    await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Returning' } });
    await api.post('/v1/auth/password/forgot', { user: { email } });
    const first = (await mails(email)).find((m) => m.kind === 'password_reset')!.data['reset_password_token']!;
    // DynamoDB's TTL deletes a token's record 30 days after it expired; the user asks again months later.
    const { db, mainTableName } = await import('../../shared/db/client.ts');
    const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
    const { hashToken } = await import('../../shared/auth/one-time-tokens.ts');
    await db().send(
      new DeleteCommand({ TableName: mainTableName(), Key: { PK: `OTT#${hashToken(first)}`, SK: 'TOKEN' } }),
    );
    expect((await api.post('/v1/auth/password/forgot', { user: { email } })).status).toBe(202);
    const resets = (await mails(email)).filter((m) => m.kind === 'password_reset');
    expect(resets).toHaveLength(2);
    const second = resets.map((m) => m.data['reset_password_token']).find((t) => t !== first)!;
    const reset = await api.post('/v1/auth/password/reset', {
      user: { reset_password_token: second, password: 'another-good-long-password' },
    });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
  });

  it('makes the same DynamoDB calls for a known address as for an unknown one', async () => {
    const tallies: Tally[] = [];
    const observer = (tally: Tally, op: string) => {
      if (op === 'A10') tallies.push(tally);
    };
    const known = unique('known');
    await api.post('/v1/auth/register-driver', { user: { email: known, password: PASSWORD, name: 'Known' } });
    tallyObservers.add(observer);
    try {
      expect((await api.post('/v1/auth/password/forgot', { user: { email: known } })).status).toBe(202);
      expect((await api.post('/v1/auth/password/forgot', { user: { email: unique('unknown') } })).status).toBe(202);
    } finally {
      tallyObservers.delete(observer);
    }
    expect((await mails(known)).filter((m) => m.kind === 'password_reset')).toHaveLength(1);
    const [forKnown, forUnknown] = tallies;
    expect(forKnown!.calls).toBeGreaterThan(0);
    expect(forUnknown!.calls).toBe(forKnown!.calls);
    expect(forUnknown!.rcu).toBe(forKnown!.rcu);
  });
});

describe('invitations', () => {
  it('answer the same neutral 409 for an address pending in another organisation as for an active account', async () => {
    const ours = await newOrganisation(api, admin, 'Ours');
    const theirs = await newOrganisation(api, admin, 'Theirs');
    const orgAdmin = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, ours);
    const pendingElsewhere = unique('pending');
    await api.post('/v1/admin/invitations', { user: { email: pendingElsewhere, org_id: theirs } }, admin);
    const active = await invitedMember(api, admin, 'OrgDriver', ROLES.OrgDriver, theirs);
    const invite = (email: string) =>
      api.post<{ detail: string }>('/v1/org-admin/invitations', { user: { email } }, orgAdmin.token);
    const pending = await invite(pendingElsewhere);
    const taken = await invite(active.email);
    expect(pending.status).toBe(409);
    expect(taken.status).toBe(409);
    expect(pending.body.detail).toBe(taken.body.detail);
    expect(pending.body.detail).not.toMatch(/pending|organisation/i);
  });

  it('refuse a re-invitation by an inviter who could not grant the pending role (403), leaving it intact', async () => {
    const org = await newOrganisation(api, admin, 'Re-invite');
    const transporter = await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org);
    const email = unique('future-admin');
    await api.post('/v1/admin/invitations', { user: { email, org_id: org, role_id: ROLES.OrgAdmin } }, admin);
    const token = (await mails(email)).find((m) => m.kind === 'invitation')!.data['invitation_token'];
    const refused = await api.post('/v1/org-transporter/invitations', { user: { email } }, transporter.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'forbidden' });
    const accepted = await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Future Admin', password: PASSWORD, invitation_token: token },
    });
    expect(accepted.status).toBe(200);
    expect((await loginAs(api, email, PASSWORD)).user).toMatchObject({ roles: ['OrgAdmin'] });
  });

  it('never let an inviter hand out a role above its own, on any route (issue 42 item 1), creating nothing', async () => {
    const org = await newOrganisation(api, admin, 'Ceilings');
    const orgAdmin = await invitedMember(api, admin, 'OrgAdmin', ROLES.OrgAdmin, org);
    const transporter = await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org);
    const cases = [
      ['/v1/org-admin/invitations', orgAdmin.token, ['SysAdmin', 'Merchant', 'Partner', 'Driver', 'ImportWorker']],
      ['/v1/org-transporter/invitations', transporter.token, ['OrgAdmin', 'SysAdmin', 'Merchant', 'Transporter']],
      ['/v1/admin/invitations', admin, ['SysAdmin', 'Partner', 'RunsheetBroadcastPlanWorker', 'Driver']],
    ] as const;
    for (const [path, token, roles] of cases) {
      for (const role of roles) {
        const email = unique(`ceiling-${role.toLowerCase()}`);
        const refused = await api.post<{ detail: string }>(
          path,
          { user: { email, org_id: org, role_id: ROLES[role] } },
          token,
        );
        expect(refused.status, `${path} ${role}`).toBe(403);
        expect(refused.body.detail, `${path} ${role}`).toMatch(
          new RegExp(`^your token has \\w+; it may invite a user with the role .+ only, not ${role}$`),
        );
        expect(await mails(email)).toEqual([]);
      }
    }
    const bulk = await api.post<{ detail: string }>(
      '/v1/admin/invitations/bulk',
      { user: { emails: [unique('bulk-sysadmin')], org_id: org, role_id: ROLES.SysAdmin } },
      admin,
    );
    expect(bulk.status).toBe(403);
    expect(bulk.body.detail).toContain('not SysAdmin');
  });

  it('still let an inviter who could grant the pending role re-invite (the newest token counts)', async () => {
    const org = await newOrganisation(api, admin, 'Re-invite');
    const transporter = await invitedMember(api, admin, 'OrgTransporter', ROLES.OrgTransporter, org);
    const email = unique('future-driver');
    await api.post('/v1/admin/invitations', { user: { email, org_id: org, role_id: ROLES.OrgDriver } }, admin);
    expect((await api.post('/v1/org-transporter/invitations', { user: { email } }, transporter.token)).status).toBe(
      201,
    );
    expect((await mails(email)).filter((m) => m.kind === 'invitation')).toHaveLength(2);
  });
});
