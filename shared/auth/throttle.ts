/**
 * Failed-password throttling (A1, T10): after 10 wrong passwords for one email address within 15 minutes, further
 * attempts for that address are answered 429 `rate_limited` with `Retry-After` until the window ends, without the
 * password being checked. Unknown addresses count the same way (the answer must not tell them apart), and a
 * successful login clears the count. One small item per address under attack (`THROTTLE#login#<email>`), gone by TTL.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { rateLimited } from '#shared/http/problems';

export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_WINDOW_SECONDS = 15 * 60;

const keyOf = (email: string) => ({ PK: `THROTTLE#login#${email.trim().toLowerCase()}`, SK: 'THROTTLE' });

/** Throws 429 when the address has used up its failures; returns whether a count exists (to clear on success). */
export async function checkLoginThrottle(email: string): Promise<boolean> {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: keyOf(email) }));
  const item = out.Item;
  if (!item) return false;
  const now = clock.nowEpochSeconds();
  const windowEnd = Number(item['window_end']);
  if (windowEnd <= now) return true;
  if (Number(item['n']) >= LOGIN_FAILURE_LIMIT) throw rateLimited(windowEnd - now);
  return true;
}

export async function recordLoginFailure(email: string): Promise<void> {
  const now = clock.nowEpochSeconds();
  const windowEnd = now + LOGIN_WINDOW_SECONDS;
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: keyOf(email),
        ConditionExpression: 'attribute_not_exists(PK) OR window_end > :now',
        UpdateExpression: 'ADD n :one SET window_end = if_not_exists(window_end, :end), expires_at = :ttl',
        ExpressionAttributeValues: { ':one': 1, ':now': now, ':end': windowEnd, ':ttl': windowEnd + 60 },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    // The last window is over: this failure opens a new one.
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: { ...keyOf(email), n: 1, window_end: windowEnd, expires_at: windowEnd + 60 },
      }),
    );
  }
}

export async function clearLoginFailures(email: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: mainTableName(), Key: keyOf(email) }));
}
