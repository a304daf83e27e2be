/**
 * Single-use tokens sent by mail (invitations: 7 days; password resets: 1 hour). Only a SHA-256 of the token is
 * stored. A token never issued is a 400; one that was used, replaced by a newer one, or has expired is a 410.
 * Issuing and redeeming return transaction items, so that the change they authorise is written in the same
 * transaction (a token can never be used twice, nor a change happen without using it).
 */
import { createHash } from 'node:crypto';
import { GetCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import { gone, invalidAt } from '#shared/errors';
import { currentIdSeed, newSecret } from '#shared/ids';

export type TokenKind = 'invitation' | 'password_reset';
type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export const TOKEN_TTL_SECONDS: Record<TokenKind, number> = { invitation: 7 * 24 * 3600, password_reset: 3600 };
/** Used and replaced tokens are kept a while after expiry so that they answer 410, not 400. */
const KEEP_AFTER_EXPIRY_SECONDS = 30 * 24 * 3600;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const tokenKey = (hash: string) => ({ PK: `OTT#${hash}`, SK: 'TOKEN' });

export interface IssuedToken {
  token: string;
  hash: string;
  items: TransactItem[];
}

/** A new token for `userId`; `previousHash` (the token it replaces) then answers 410. */
export function issueToken(kind: TokenKind, userId: string, previousHash?: string | null): IssuedToken {
  const token = newSecret(32);
  const hash = hashToken(token);
  const expiresAtMs = clock.nowMs() + TOKEN_TTL_SECONDS[kind] * 1000;
  const items: TransactItem[] = [
    {
      Put: {
        TableName: mainTableName(),
        Item: {
          ...tokenKey(hash),
          entity: 'one_time_token',
          kind,
          user_id: userId,
          status: 'active',
          expires_at_ms: expiresAtMs,
          expires_at: Math.floor(expiresAtMs / 1000) + KEEP_AFTER_EXPIRY_SECONDS,
        },
      },
    },
  ];
  if (previousHash) {
    items.push({
      Update: {
        TableName: mainTableName(),
        Key: tokenKey(previousHash),
        // Unconditional: the old record may be gone (TTL removes it 30 days after its expiry), and a re-issue must
        // not fail for that. A record made again here answers 410 until its own TTL.
        UpdateExpression:
          'SET #status = :replaced, entity = if_not_exists(entity, :entity), #kind = if_not_exists(#kind, :kind), ' +
          'expires_at = if_not_exists(expires_at, :keep)',
        ExpressionAttributeNames: { '#status': 'status', '#kind': 'kind' },
        ExpressionAttributeValues: {
          ':replaced': 'replaced',
          ':kind': kind,
          ':entity': 'one_time_token',
          ':keep': clock.nowEpochSeconds() + KEEP_AFTER_EXPIRY_SECONDS,
        },
      },
    });
  }
  return { token, hash, items };
}

export interface Redeemable {
  userId: string;
  hash: string;
  /** Marks the token used; fails the transaction if somebody used it first. */
  useItem: TransactItem;
  /**
   * True when this very request (same operation, credentials, Idempotency-Key and body: shared/ids.ts) already used
   * the token and lost its answer: the change it authorised is made, and the retry answers as the first call did.
   */
  usedByThisRequest: boolean;
}

/** Checks a presented token; `field` is the body path named by a 400. */
export async function checkToken(kind: TokenKind, token: string, field: string): Promise<Redeemable> {
  const hash = hashToken(token);
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: tokenKey(hash) }));
  const item = out.Item;
  if (!item || item['kind'] !== kind) throw invalidAt(field, 'is not a valid token');
  const seed = currentIdSeed();
  if (item['status'] === 'used' && seed !== undefined && item['used_by'] === seed) {
    return { userId: String(item['user_id']), hash, useItem: {}, usedByThisRequest: true };
  }
  if (item['status'] === 'used') throw gone('this token was already used');
  if (item['status'] === 'replaced') throw gone('this token was replaced by a newer one');
  if (Number(item['expires_at_ms']) <= clock.nowMs()) throw gone('this token has expired');
  return {
    userId: String(item['user_id']),
    hash,
    useItem: {
      Update: {
        TableName: mainTableName(),
        Key: tokenKey(hash),
        UpdateExpression: `SET #status = :used, used_at = :now${seed === undefined ? '' : ', used_by = :by'}`,
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':used': 'used',
          ':active': 'active',
          ':now': clock.nowIso(),
          ...(seed === undefined ? {} : { ':by': seed }),
        },
      },
    },
    usedByThisRequest: false,
  };
}
