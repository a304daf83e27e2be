/**
 * Auth codes (T8, T9, and their redemption through X5): a signed-in user lets a partner client act as them. A code is
 * random, valid 10 minutes, single use, stored as SHA-256 in `AUTHCODE#<hash> / CODE`. Redeeming needs the client
 * the code names (HTTP Basic) and returns a bearer token for the user; the record keeps that token's `jti`.
 */
import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { refreshTokenOwner, userCaller } from '#shared/auth/sessions';
import { issueBearerToken } from '#shared/auth/tokens';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName, transactWrite } from '#shared/db/client';
import { gone, invalidAt, notFound } from '#shared/errors';
import { newSecret, recordUuid } from '#shared/ids';
import { type ClientRecord, findClientByKey } from '#shared/tokens/clients';

export const AUTH_CODE_TTL_MS = 10 * 60 * 1000;

const codeKey = (code: string) => ({ PK: `AUTHCODE#${createHash('sha256').update(code).digest('hex')}`, SK: 'CODE' });
/**
 * The request that made a code, by the code's id, which derives from the request's Idempotency-Key (shared/ids.ts):
 * `AUTHCODEBY#<id> / CODE` names the code's item. A retry after a lost answer finds it and replaces the code its
 * first attempt made (whose value the client never saw: only its hash is stored) instead of making a second one.
 */
const requestKey = (id: string) => ({ PK: `AUTHCODEBY#${id}`, SK: 'CODE' });

/** T8. */
export async function createAuthCode(
  caller: Caller,
  input: { refresh_token: string; client_auth: { key: string; name: string } },
) {
  if ((await refreshTokenOwner(input.refresh_token)) !== caller.id) {
    throw invalidAt('refresh_token', 'is not an active session of yours');
  }
  const client = await findClientByKey(input.client_auth.key);
  if (!client || client.revoked_at) throw invalidAt('client_auth.key', 'names no client');
  const user = await getUser(caller.id);
  if (!user || user.deleted_at) throw notFound('user');
  const code = newSecret(24);
  const id = recordUuid();
  const expiresAt = clock.nowEpochSeconds() + 30 * 24 * 3600;
  const request = { ...requestKey(id), entity: 'auth_code_request', code_pk: codeKey(code).PK, expires_at: expiresAt };
  const codeItem = {
    ...codeKey(code),
    entity: 'auth_code',
    id,
    client_auth: { key: client.client_key, name: input.client_auth.name },
    user_id: user.id,
    name: user.name,
    email: user.email,
    roles: user.roles.join(','),
    org_id: user.org_id,
    token: null,
    status: 'active',
    created_at: clock.nowIso(),
    expires_at_ms: clock.nowMs() + AUTH_CODE_TTL_MS,
    expires_at: expiresAt,
  };
  const table = mainTableName();
  const outcome = await transactWrite([
    { Put: { TableName: table, Item: codeItem } },
    { Put: { TableName: table, Item: request, ConditionExpression: 'attribute_not_exists(PK)' } },
  ]);
  if (outcome === 'earlier') {
    // This same request made a code before and lost its answer: that code goes, this one takes its place.
    const earlier = await db().send(new GetCommand({ TableName: table, Key: requestKey(id) }));
    const earlierPk = earlier.Item?.['code_pk'];
    await transactWrite([
      ...(typeof earlierPk === 'string' && earlierPk !== codeItem.PK
        ? [{ Delete: { TableName: table, Key: { PK: earlierPk, SK: 'CODE' } } }]
        : []),
      { Put: { TableName: table, Item: codeItem } },
      { Put: { TableName: table, Item: request } },
    ]);
  }
  return { auth_code: code, server_time: clock.nowIso() };
}

/** T9. */
export async function readAuthCode(code: string) {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: codeKey(code) }));
  const item = out.Item;
  if (!item) throw notFound('auth code');
  return {
    id: String(item['id']),
    auth_code: code,
    client_auth: item['client_auth'] as { key: string; name: string },
    token: (item['token'] as string | null) ?? null,
    name: String(item['name']),
    email: String(item['email']),
    roles: String(item['roles']),
    org_id: (item['org_id'] as string | null) ?? null,
    created_at: String(item['created_at']),
    status: item['status'] === 'used' ? 'used' : Number(item['expires_at_ms']) <= clock.nowMs() ? 'expired' : 'active',
  };
}

/** X5 `grant_type=authorization_code`: once, by the client the code names. */
export async function redeemAuthCode(client: ClientRecord, code: string) {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: codeKey(code) }));
  const item = out.Item;
  if (!item) throw invalidAt('code', 'is not a code this service issued');
  if ((item['client_auth'] as { key?: string }).key !== client.client_key) {
    throw invalidAt('code', 'was issued to another client');
  }
  if (item['status'] === 'used') throw gone('this auth code was already used');
  if (Number(item['expires_at_ms']) <= clock.nowMs()) throw gone('this auth code has expired');
  const user = await getUser(String(item['user_id']));
  if (!user || user.deleted_at) throw gone('the account behind this auth code is gone');
  const issued = await issueBearerToken(userCaller(user), user.token_gen);
  const jti = JSON.parse(Buffer.from(issued.bearer_token.split('.')[1]!, 'base64url').toString()).jti as string;
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: codeKey(code),
        UpdateExpression: 'SET #status = :used, #token = :jti, used_at = :now',
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
        ExpressionAttributeValues: { ':used': 'used', ':active': 'active', ':jti': jti, ':now': clock.nowIso() },
      }),
    );
  } catch (error) {
    if (isConditionalFailure(error)) throw gone('this auth code was already used');
    throw error;
  }
  return issued;
}
