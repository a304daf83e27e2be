/**
 * The per-organisation bound on route builds under way (contract 4.10, issue 51 item 2): an organisation has at most
 * `BUILDS_UNDER_WAY` builds `queued` or `solving`, X23 and X30 together. Each organisation has one small item of its
 * own (`ORG#<org>#ROUTEBUILDS` / `UNDERWAY`, never an item every organisation shares) holding the set of its builds
 * under way (`<planning>/<build>`). A build takes its place in the same transaction that writes it, on condition that
 * the set is not full (or holds it already: a request retried with its Idempotency-Key counts once), so concurrent
 * requests cannot pass the bound together; its place is given back in the same transaction that ends it (worker.ts
 * `end`, whatever ended it: a result, a failure, its attempts exhausted), so a place is never held by an ended build.
 * A full set is checked once against its builds (an entry whose build ended or is gone is dropped) before the 429.
 */

import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactItem } from '#shared/db/client';
import { cancelledIndexes, db, getAll, mainTableName, transactWrite } from '#shared/db/client';
import { limitExceeded } from '#shared/errors';
import { buildKey } from '#shared/routing/keys';

/** Builds `queued` or `solving` an organisation may have at once. */
export const BUILDS_UNDER_WAY = 2;

/** The item holding an organisation's builds under way. */
export const buildsUnderWayKey = (orgId: string) => ({ PK: `ORG#${orgId}#ROUTEBUILDS`, SK: 'UNDERWAY' });

/** A build as the set names it: its key's parts, so that the check of a full set can read it. */
const entryOf = (planningId: string, buildId: string) => `${planningId}/${buildId}`;

/** The transaction's item that takes a place for the build, unless the set is full (or holds the build already). */
export function takeBuildPlace(orgId: string, planningId: string, buildId: string): TransactItem {
  return {
    Update: {
      TableName: mainTableName(),
      Key: buildsUnderWayKey(orgId),
      UpdateExpression: 'SET entity = :entity ADD builds :entry',
      ConditionExpression: 'attribute_not_exists(builds) OR size(builds) < :max OR contains(builds, :one)',
      ExpressionAttributeValues: {
        ':entity': 'route_builds_under_way',
        ':entry': new Set([entryOf(planningId, buildId)]),
        ':one': entryOf(planningId, buildId),
        ':max': BUILDS_UNDER_WAY,
      },
    },
  };
}

/** The transaction's item that gives the build's place back (nothing if it holds none). */
export function releaseBuildPlace(orgId: string, planningId: string, buildId: string): TransactItem {
  return {
    Update: {
      TableName: mainTableName(),
      Key: buildsUnderWayKey(orgId),
      UpdateExpression: 'DELETE builds :entry',
      ExpressionAttributeValues: { ':entry': new Set([entryOf(planningId, buildId)]) },
    },
  };
}

/**
 * Drops the entries of a full set whose builds have ended (or are gone); answers the builds still under way, each
 * with its `time_limit_s`.
 */
async function buildsStillUnderWay(orgId: string): Promise<{ timeLimitS: number }[]> {
  const held = await getAll<{ builds?: Set<string> }>(mainTableName(), [buildsUnderWayKey(orgId)], {
    ConsistentRead: true,
  });
  const entries = [...(held[0]?.builds ?? [])];
  const keys = entries.map((entry) => {
    const [planningId, buildId] = entry.split('/') as [string, string];
    return buildKey(planningId, buildId);
  });
  const builds = await getAll<{ SK: string; status: string; request: { time_limit_s: number } }>(
    mainTableName(),
    keys,
    {
      ProjectionExpression: 'SK, #status, #request.time_limit_s',
      ExpressionAttributeNames: { '#status': 'status', '#request': 'request' },
      ConsistentRead: true,
    },
  );
  const live = builds.filter((build) => build.status === 'queued' || build.status === 'solving');
  const liveSks = new Set(live.map((build) => build.SK));
  const ended = entries.filter((_, i) => !liveSks.has(keys[i]!.SK));
  if (ended.length > 0)
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: buildsUnderWayKey(orgId),
        UpdateExpression: 'DELETE builds :ended',
        ExpressionAttributeValues: { ':ended': new Set(ended) },
      }),
    );
  return live.map((build) => ({ timeLimitS: build.request.time_limit_s }));
}

/**
 * Writes `items` (a new build's) together with the build's place (`place`, from `takeBuildPlace`: the last item).
 * A full set is checked once (its ended builds dropped) and the write tried again; still full, a 429 `rate_limited`
 * whose `Retry-After` is the shortest time one of the builds under way may take (its `time_limit_s` + 30 s, 4.10).
 */
export async function writeWithBuildPlace(orgId: string, items: TransactItem[], place: TransactItem) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await transactWrite([...items, place]);
    } catch (error) {
      if (!cancelledIndexes(error).includes(items.length)) throw error;
    }
    const live = await buildsStillUnderWay(orgId);
    if (attempt === 0 && live.length < BUILDS_UNDER_WAY) continue;
    const soonestS = Math.min(...live.map((build) => build.timeLimitS)) + 30;
    throw limitExceeded(
      `your organisation has ${live.length} route builds queued or solving, the most it may have at once ` +
        `(${BUILDS_UNDER_WAY}): build again once one of them has completed or failed`,
      Number.isFinite(soonestS) ? soonestS : 30,
    );
  }
}
