import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { invoke } from '../support/invoke.ts';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { createUser, userKey } = await import('../../shared/accounts/users.ts');
const { hashPassword } = await import('../../shared/auth/passwords.ts');
const { authenticate } = await import('../../shared/auth/authorizer.ts');
const { db, mainTableName } = await import('../../shared/db/client.ts');
const login = (await import('../../functions/auth/login.ts')).handler;
const refresh = (await import('../../functions/auth/refresh.ts')).handler;
const logout = (await import('../../functions/auth/logout.ts')).handler;

const PASSWORD = 'a-long-enough-password';
let confirmedEmail = '';

async function newUser(confirmed = true, roles: ('OrgAdmin' | 'Driver')[] = ['OrgAdmin']) {
  const email = `user-${Math.random().toString(36).slice(2)}@example.com`;
  const user = await createUser({
    email,
    name: 'Test User',
    roles,
    password_hash: await hashPassword(PASSWORD),
    confirmed_at: confirmed ? new Date().toISOString() : null,
  });
  return { email, user };
}

type Tokens = { bearer_token: string; refresh_token: string; user: Record<string, unknown> };
const signIn = (email: string, password = PASSWORD) => invoke<Tokens>(login, { body: { user: { email, password } } });
const rotate = (token: string) => invoke<Tokens>(refresh, { body: { refresh_token: token } });

beforeAll(async () => {
  confirmedEmail = (await newUser()).email;
});

describe('A1 login', () => {
  it('returns a bearer token, a refresh token and the user, never the password hash', async () => {
    const response = await signIn(confirmedEmail.toUpperCase());
    expect(response.status).toBe(200);
    expect(response.body.bearer_token.split('.')).toHaveLength(3);
    expect(response.body.refresh_token.length).toBeGreaterThanOrEqual(43);
    expect(response.body.user).toMatchObject({ email: confirmedEmail, roles: ['OrgAdmin'] });
    expect(JSON.stringify(response.body)).not.toContain('argon2');
  });

  it('answers an unknown email and a wrong password with the same 401', async () => {
    const wrong = await signIn(confirmedEmail, 'not-the-password');
    const unknown = await signIn('nobody@example.com');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect({ ...wrong.body, request_id: '' }).toEqual({ ...unknown.body, request_id: '' });
  });

  it('refuses an unconfirmed account with 403 account_not_confirmed', async () => {
    const { email } = await newUser(false);
    const response = await signIn(email);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'account_not_confirmed' });
  });

  it('gives drivers their driver profile from creation', async () => {
    const { email } = await newUser(true, ['Driver']);
    const response = await signIn(email);
    expect(response.body.user['driver_profile']).toMatchObject({
      version_rev: expect.stringMatching(/^1-/),
      service_types: [],
    });
  });

  it('validates the body with field paths', async () => {
    const response = await invoke(login, { body: { user: { email: 'not-an-email', password: 'x' } } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'user.email' }] });
  });
});

describe('T1 refresh', () => {
  it('rotates: a new pair is issued and the successor refresh token works', async () => {
    const first = (await signIn(confirmedEmail)).body;
    const second = await rotate(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(await authenticate(`Bearer ${second.body.bearer_token}`)).toMatchObject({
      kind: 'user',
      roles: ['OrgAdmin'],
    });
    expect((await rotate(second.body.refresh_token)).status).toBe(200);
  });

  it('revokes the whole family when a retired token is presented again', async () => {
    const first = (await signIn(confirmedEmail)).body;
    const second = (await rotate(first.refresh_token)).body;
    const replay = await rotate(first.refresh_token);
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ code: 'unauthenticated' });
    // The legitimate successor dies with its family.
    expect((await rotate(second.refresh_token)).status).toBe(401);
  });

  it('lets exactly one of two simultaneous uses of one token win', async () => {
    const first = (await signIn(confirmedEmail)).body;
    const results = await Promise.all([rotate(first.refresh_token), rotate(first.refresh_token)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('answers an unknown token with 401', async () => {
    expect((await rotate('not-a-token-we-issued')).status).toBe(401);
  });

  it('stores only a hash of the refresh token', async () => {
    const { refresh_token } = (await signIn(confirmedEmail)).body;
    const raw = await db().send(
      new GetCommand({ TableName: mainTableName(), Key: { PK: `REFRESH#${refresh_token}`, SK: 'TOKEN' } }),
    );
    expect(raw.Item).toBeUndefined();
  });
});

describe('X6 logout and token generations', () => {
  it('with a refresh token revokes that family only', async () => {
    const a = (await signIn(confirmedEmail)).body;
    const b = (await signIn(confirmedEmail)).body;
    const caller = await authenticate(`Bearer ${a.bearer_token}`);
    const response = await invoke(logout, { body: { refresh_token: a.refresh_token }, caller });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ code: 'success' });
    expect((await rotate(a.refresh_token)).status).toBe(401);
    expect((await rotate(b.refresh_token)).status).toBe(200);
  });

  it('without one signs the user out everywhere: every family and bearer token stops working', async () => {
    const { email } = await newUser();
    const a = (await signIn(email)).body;
    const b = (await signIn(email)).body;
    const caller = await authenticate(`Bearer ${a.bearer_token}`);
    expect((await invoke(logout, { body: {}, caller })).status).toBe(200);
    expect(await authenticate(`Bearer ${b.bearer_token}`)).toBeNull();
    expect((await rotate(a.refresh_token)).status).toBe(401);
    expect((await rotate(b.refresh_token)).status).toBe(401);
    // A fresh login works again.
    expect((await signIn(email)).status).toBe(200);
  });

  it('needs a user token', async () => {
    expect((await invoke(logout, { body: {} })).status).toBe(401);
    const client = { kind: 'client' as const, id: 'c1', roles: ['ImportWorker' as const], orgId: null };
    expect((await invoke(logout, { body: {}, caller: client })).status).toBe(403);
  });

  it('stops a deleted user at once: bearer refused, login refused', async () => {
    const { email, user } = await newUser();
    const tokens = (await signIn(email)).body;
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: userKey(user.id),
        UpdateExpression: 'SET deleted_at = :now ADD token_gen :one',
        ExpressionAttributeValues: { ':now': new Date().toISOString(), ':one': 1 },
      }),
    );
    expect(await authenticate(`Bearer ${tokens.bearer_token}`)).toBeNull();
    expect((await signIn(email)).status).toBe(401);
    expect((await rotate(tokens.refresh_token)).status).toBe(401);
  });
});
