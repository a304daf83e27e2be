/**
 * Refresh-token sessions (contract section 3): opaque 256-bit tokens stored as SHA-256, valid 30 days, single use.
 * Each login starts a family; T1 retires the presented token and issues the next of its family. Presenting a retired
 * token again is reuse: the whole family is revoked. A family also dies when the user's token generation moves on
 * (logout everywhere, deletion).
 */
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { bumpTokenGeneration, getUser, type UserRecord } from '#shared/accounts/users';
import type { Caller } from '#shared/auth/caller';
import { refreshRefused } from '#shared/auth/refusals';
import { issueBearerToken } from '#shared/auth/tokens';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName, transactWrite } from '#shared/db/client';
import { newSecret, newUuid } from '#shared/ids';

export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;

export interface TokenPair {
  bearer_token: string;
  bearer_token_expired_at: number;
  refresh_token: string;
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const tokenKey = (hash: string) => ({ PK: `REFRESH#${hash}`, SK: 'TOKEN' });
const familyKey = (id: string) => ({ PK: `FAMILY#${id}`, SK: 'FAMILY' });

export const userCaller = (user: UserRecord): Caller => ({
  kind: 'user',
  id: user.id,
  roles: user.roles,
  orgId: user.org_id,
});

/** Starts a new refresh family for the user and issues the first pair of tokens. */
export async function startSession(user: UserRecord): Promise<TokenPair> {
  const familyId = newUuid();
  const expiresAt = clock.nowEpochSeconds() + REFRESH_TTL_SECONDS;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...familyKey(familyId),
        entity: 'refresh_family',
        user_id: user.id,
        gen: user.token_gen,
        created_at: clock.nowIso(),
        expires_at: expiresAt,
      },
    }),
  );
  const refreshToken = newSecret(32);
  await db().send(new PutCommand({ TableName: mainTableName(), Item: tokenItem(refreshToken, familyId, user.id) }));
  return { ...(await issueBearerToken(userCaller(user), user.token_gen)), refresh_token: refreshToken };
}

function tokenItem(token: string, familyId: string, userId: string) {
  return {
    ...tokenKey(hashToken(token)),
    entity: 'refresh_token',
    family_id: familyId,
    user_id: userId,
    status: 'active',
    created_at: clock.nowIso(),
    expires_at: clock.nowEpochSeconds() + REFRESH_TTL_SECONDS,
  };
}

async function readToken(token: string) {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: tokenKey(hashToken(token)) }));
  const item = out.Item;
  if (!item || Number(item['expires_at']) <= clock.nowEpochSeconds()) return undefined;
  return { familyId: String(item['family_id']), userId: String(item['user_id']), status: String(item['status']) };
}

/** T1: retire the presented token and issue the next pair; any doubt is a 401. */
export async function rotateRefreshToken(token: string): Promise<TokenPair> {
  const current = await readToken(token);
  if (!current) throw refreshRefused('unknown_or_expired');
  if (current.status !== 'active') {
    await revokeFamily(current.familyId);
    throw refreshRefused('reused');
  }
  const familyOut = await db().send(new GetCommand({ TableName: mainTableName(), Key: familyKey(current.familyId) }));
  const family = familyOut.Item;
  const user = await getUser(current.userId);
  if (!family || family['revoked_at'] || !user || user.deleted_at || user.token_gen !== Number(family['gen'])) {
    throw refreshRefused('revoked');
  }
  const next = newSecret(32);
  try {
    await transactWrite([
      {
        Update: {
          TableName: mainTableName(),
          Key: tokenKey(hashToken(token)),
          UpdateExpression: 'SET #status = :retired, retired_at = :now',
          ConditionExpression: '#status = :active',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':retired': 'retired', ':active': 'active', ':now': clock.nowIso() },
        },
      },
      {
        ConditionCheck: {
          TableName: mainTableName(),
          Key: familyKey(current.familyId),
          ConditionExpression: 'attribute_not_exists(revoked_at)',
        },
      },
      { Put: { TableName: mainTableName(), Item: tokenItem(next, current.familyId, user.id) } },
    ]);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    // Someone used the same token a moment earlier: that is reuse too.
    await revokeFamily(current.familyId);
    throw refreshRefused('reused');
  }
  return { ...(await issueBearerToken(userCaller(user), user.token_gen)), refresh_token: next };
}

async function revokeFamily(familyId: string): Promise<void> {
  await db()
    .send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: familyKey(familyId),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':now': clock.nowIso() },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalFailure(error)) throw error;
    });
}

/**
 * X6: with a refresh token, revoke its family (only the caller's own; anything else is a no-op, so logout stays
 * idempotent); without one, revoke every family and bearer token of the user by moving the token generation on.
 */
export async function logout(caller: Caller, refreshToken: string | undefined): Promise<void> {
  if (refreshToken === undefined) {
    await bumpTokenGeneration(caller.id);
    return;
  }
  const current = await readToken(refreshToken);
  if (current && current.userId === caller.id) await revokeFamily(current.familyId);
}

/** The user an active refresh token belongs to, or undefined (T8 proves a live session with it). */
export async function refreshTokenOwner(token: string): Promise<string | undefined> {
  const current = await readToken(token);
  if (current?.status !== 'active') return undefined;
  const family = await db().send(new GetCommand({ TableName: mainTableName(), Key: familyKey(current.familyId) }));
  const user = await getUser(current.userId);
  const live = family.Item && !family.Item['revoked_at'] && user && !user.deleted_at;
  return live && user.token_gen === Number(family.Item!['gen']) ? current.userId : undefined;
}
