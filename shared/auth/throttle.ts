/**
 * Failed-password throttling (A1, T10): at most 10 passwords are checked for one email address within 15 minutes
 * unless one of them is right; further attempts for that address are answered 429 `rate_limited` with `Retry-After`
 * until the window ends, without the password being checked. Each attempt is counted with one atomic ADD *before*
 * its password is verified, and only an attempt whose count is within the limit is verified, so concurrent attempts
 * cannot slip past the limit between a check and an increment. Unknown addresses count the same way (the answer
 * must not tell them apart), and a successful login clears the count. One small item per address under attack
 * (`THROTTLE#login#<email>`), gone by TTL.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { limitExceeded } from '#shared/errors';

export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_WINDOW_SECONDS = 15 * 60;

const keyOf = (email: string) => ({ PK: `THROTTLE#login#${email.trim().toLowerCase()}`, SK: 'THROTTLE' });

/**
 * Counts one login attempt for the address, atomically, and throws 429 when it is beyond the limit of the current
 * window (the password must then not be checked). Call before verifying; clear the count on success.
 */
export async function countLoginAttempt(email: string): Promise<void> {
  const now = clock.nowEpochSeconds();
  const windowEnd = now + LOGIN_WINDOW_SECONDS;
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: keyOf(email),
          ConditionExpression: 'attribute_not_exists(PK) OR window_end > :now',
          UpdateExpression: 'ADD n :one SET window_end = if_not_exists(window_end, :end), expires_at = :ttl',
          ExpressionAttributeValues: { ':one': 1, ':now': now, ':end': windowEnd, ':ttl': windowEnd + 60 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const count = Number(out.Attributes?.['n'] ?? 1);
      const end = Number(out.Attributes?.['window_end'] ?? windowEnd);
      if (count > LOGIN_FAILURE_LIMIT) throw limitExceeded('slow down and retry later', Math.max(1, end - now));
      return;
    } catch (error) {
      if (!isConditionalFailure(error) || attempt > 0) throw error;
    }
    // The last window is over: this attempt opens a new one, unless a concurrent attempt opened it first (then
    // the loop counts this one in it).
    try {
      await db().send(
        new PutCommand({
          TableName: mainTableName(),
          Item: { ...keyOf(email), n: 1, window_end: windowEnd, expires_at: windowEnd + 60 },
          ConditionExpression: 'attribute_not_exists(PK) OR window_end <= :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      );
      return;
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }
}

/** A right password: the address starts afresh. */
export async function clearLoginFailures(email: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: mainTableName(), Key: keyOf(email) }));
}
