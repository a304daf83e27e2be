/**
 * Counts in fixed windows: one main-table item per subject and window (`THROTTLE#<subject>#<window>`), counted by one
 * atomic ADD (concurrent requests cannot all see a count below a limit) and gone by TTL a minute after its window.
 * A10's mails per address, X5's requests per source and per client, and X29's per token and per address use it.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, mainTableName } from '#shared/db/client';
import { limitExceeded } from '#shared/errors';

export interface WindowCount {
  /** This event's place in its window (1 for the first). */
  count: number;
  /** Seconds until the window ends (at least 1). */
  retryAfterS: number;
  key: { PK: string; SK: string };
}

export async function countInWindow(subject: string, windowSeconds: number): Promise<WindowCount> {
  const now = clock.nowEpochSeconds();
  const window = Math.floor(now / windowSeconds);
  const key = { PK: `THROTTLE#${subject}#${window}`, SK: 'THROTTLE' };
  const counted = await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: key,
      UpdateExpression: 'ADD n :one SET expires_at = :ttl',
      ExpressionAttributeValues: { ':one': 1, ':ttl': (window + 1) * windowSeconds + 60 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return {
    count: Number(counted.Attributes?.['n'] ?? 1),
    retryAfterS: Math.max(1, (window + 1) * windowSeconds - now),
    key,
  };
}

/** Counts an event of `subject`; past `limit` in its window, a 429 `rate_limited` whose Retry-After ends the window. */
export async function admitInWindow(subject: string, limit: number, windowSeconds: number, what: string) {
  const { count, retryAfterS } = await countInWindow(subject, windowSeconds);
  if (count > limit)
    throw limitExceeded(`at most ${limit} ${what} a minute: retry after ${retryAfterS} s`, retryAfterS);
}
