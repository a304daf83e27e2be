/**
 * Issue 14, item 4: mail that cannot be sent is never lost behind an answer that says it went. With the mail port
 * failing (the local outbox's fault switch, which fails as SES does when it is down):
 * - the welcome after a registration is held in the outbox, the registration answers 201, and the sweep sends the
 *   welcome once mail is back (a registration cannot simply be repeated: its retry would meet its own account);
 * - a security code, an invitation and a password reset answer 503 `unavailable`; the retry (the same
 *   Idempotency-Key) once mail is back sends one mail whose code or token works.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHost } from '../../lib/local/start.ts';
import { localOutbox } from '../../shared/ports/mail.ts';
import { type Client, client, loginAs } from '../support/http.ts';
import { ADMIN, startTestHost } from '../support/local.ts';

let host: RunningHost;
let api: Client;
let admin: string;
let orgId: string;
const PASSWORD = 'a-good-long-password';

beforeAll(async () => {
  process.env['MAIL_OUTBOX_SETTLE_MS'] = '0';
  host = await startTestHost();
  api = client(host.url);
  admin = (await loginAs(api, ADMIN.email, ADMIN.password)).bearer_token;
  orgId = (await api.post<{ id: string }>('/v1/admin/organisations', { name: 'Mail Co', kind: 'transporter' }, admin))
    .body.id;
});

afterAll(async () => {
  localOutbox.failing = false;
  await host?.stop();
});

const address = (what: string) => `${what}.${randomBytes(4).toString('hex')}@example.com`;

async function mails(to: string) {
  const outbox = await api.get<{ messages: { kind: string; data: Record<string, string> }[] }>(
    `/_local/outbox?to=${encodeURIComponent(to)}`,
  );
  return outbox.body.messages;
}

function expectUnavailable(response: { status: number; body: unknown; headers: Headers }) {
  expect(response.status, JSON.stringify(response.body)).toBe(503);
  expect(response.body).toMatchObject({ code: 'unavailable' });
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('mail down', () => {
  it('holds the welcome of a registration in the outbox and sends it once mail is back', async () => {
    const email = address('welcome');
    localOutbox.failing = true;
    const registered = await api.post(
      '/v1/auth/register-driver',
      { user: { email, password: PASSWORD, name: 'Wendy Welcome' } },
      undefined,
      { 'idempotency-key': randomBytes(8).toString('hex') },
    );
    // Let a sweep or two run while mail is still down: the welcome stays held.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const whileDown = await mails(email);
    localOutbox.failing = false;
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(whileDown).toEqual([]);
    let sent = await mails(email);
    for (let i = 0; i < 100 && sent.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      sent = await mails(email);
    }
    // And never twice: later sweeps find the outbox empty.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await mails(email)).map((m) => m.kind)).toEqual(['welcome']);
  }, 20_000);

  it('answers 503 for a security code, and the retry sends one code that works', async () => {
    const email = address('code');
    await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Cody Code' } });
    const key = { 'idempotency-key': randomBytes(8).toString('hex') };
    localOutbox.failing = true;
    const refused = await api.post('/v1/auth/security-code', { user: { email } }, undefined, key);
    localOutbox.failing = false;
    expectUnavailable(refused);
    const retried = await api.post('/v1/auth/security-code', { user: { email } }, undefined, key);
    expect(retried.status, JSON.stringify(retried.body)).toBeLessThan(300);
    const codes = (await mails(email)).filter((m) => m.kind === 'security_code');
    expect(codes).toHaveLength(1);
    const verified = await api.post('/v1/auth/verify-security-code', {
      user: { email, security_code: codes[0]!.data['security_code'] },
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  });

  it('answers 503 for an invitation, and the retry sends one invitation that can be accepted', async () => {
    const email = address('invite');
    const key = { 'idempotency-key': randomBytes(8).toString('hex') };
    const invite = () => api.post('/v1/admin/invitations', { user: { email, org_id: orgId } }, admin, key);
    localOutbox.failing = true;
    const refused = await invite();
    localOutbox.failing = false;
    expectUnavailable(refused);
    const retried = await invite();
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const invitations = (await mails(email)).filter((m) => m.kind === 'invitation');
    expect(invitations).toHaveLength(1);
    const accepted = await api.post('/v1/auth/accept-invitation', {
      user: { name: 'Ivy Invited', password: PASSWORD, invitation_token: invitations[0]!.data['invitation_token'] },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBeLessThan(300);
    expect((await loginAs(api, email, PASSWORD)).bearer_token).toBeTruthy();
  });

  it('answers 503 for a password reset, and the retry sends one token that resets', async () => {
    const email = address('reset');
    await api.post('/v1/auth/register-driver', { user: { email, password: PASSWORD, name: 'Rita Reset' } });
    const key = { 'idempotency-key': randomBytes(8).toString('hex') };
    localOutbox.failing = true;
    const refused = await api.post('/v1/auth/password/forgot', { user: { email } }, undefined, key);
    localOutbox.failing = false;
    expectUnavailable(refused);
    const retried = await api.post('/v1/auth/password/forgot', { user: { email } }, undefined, key);
    expect(retried.status, JSON.stringify(retried.body)).toBeLessThan(300);
    const resets = (await mails(email)).filter((m) => m.kind === 'password_reset');
    expect(resets).toHaveLength(1);
    const token = Object.values(resets[0]!.data)[0];
    const reset = await api.post('/v1/auth/password/reset', {
      user: { reset_password_token: token, password: 'another-long-password' },
    });
    expect(reset.status, JSON.stringify(reset.body)).toBeLessThan(300);
  });
});
