/**
 * The per-organisation bound on route builds under way (contract 4.10, issue 51 item 2): an organisation has at most
 * `BUILDS_UNDER_WAY` builds `queued` or `solving`, X23 and X30 together. Each organisation has one small item of its
 * own (`ORG#<org>#ROUTEBUILDS` / `UNDERWAY`, never an item every organisation shares) whose map `builds` holds its
 * builds under way (`<planning>/<build>` → when the place was taken, ms). A build takes its place before it is
 * written, with one conditional write on that small item (fewer than the bound, or this build's already: a request
 * retried with its Idempotency-Key counts once), so concurrent requests cannot pass the bound together; the build's
 * end gives it back (worker.ts `end`, whatever ended it: a result, a failure, its attempts exhausted). Not one
 * transaction with the build's own writes: a transaction doubles the write units of the build's record (tens of KB),
 * and the small item's two writes cost 1 WCU each. What a crash between the two steps leaves (a place whose build was
 * never written, or has ended) is dropped when the map is full: each entry is checked against its build before a 429.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, getAll, isConditionalFailure, mainTableName } from '#shared/db/client';
import { limitExceeded } from '#shared/errors';
import { logger } from '#shared/log';
import { buildKey } from '#shared/routing/keys';

/** Builds `queued` or `solving` an organisation may have at once. */
export const BUILDS_UNDER_WAY = 2;

/** The item holding an organisation's builds under way. */
export const buildsUnderWayKey = (orgId: string) => ({ PK: `ORG#${orgId}#ROUTEBUILDS`, SK: 'UNDERWAY' });

/** A build as the map names it: its key's parts, so that the check of a full map can read it. */
const entryOf = (planningId: string, buildId: string) => `${planningId}/${buildId}`;

/** A place whose build is not written this long after it was taken never will be (X23 answers within 30 s). */
const UNWRITTEN_AFTER_MS = 60_000;

/**
 * Drops the entries of a full map whose builds have ended, or were never written; answers the builds still under
 * way, each with its `time_limit_s`.
 */
async function buildsStillUnderWay(orgId: string): Promise<{ timeLimitS: number }[]> {
  const held = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: buildsUnderWayKey(orgId), ConsistentRead: true }),
  );
  const entries = Object.entries((held.Item?.['builds'] ?? {}) as Record<string, number>);
  const keys = entries.map(([entry]) => {
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
  const bySk = new Map(builds.map((build) => [build.SK, build]));
  const live: { timeLimitS: number }[] = [];
  const gone: string[] = [];
  entries.forEach(([entry, takenMs], i) => {
    const build = bySk.get(keys[i]!.SK);
    if (build && (build.status === 'queued' || build.status === 'solving'))
      live.push({ timeLimitS: build.request.time_limit_s });
    else if (build || clock.nowMs() - Number(takenMs) > UNWRITTEN_AFTER_MS) gone.push(entry);
    // A build not written yet whose place is fresh: its X23 is still under way, and it counts.
    else live.push({ timeLimitS: 0 });
  });
  for (const entry of gone) await dropPlace(orgId, entry);
  return live;
}

/** Removes one entry of the map (nothing if the map or the entry is gone). */
async function dropPlace(orgId: string, entry: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: buildsUnderWayKey(orgId),
        UpdateExpression: 'REMOVE builds.#entry',
        ConditionExpression: 'attribute_exists(builds)',
        ExpressionAttributeNames: { '#entry': entry },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/** One try at a place: true when taken (or held already), false when the map is full. */
async function tryPlace(orgId: string, entry: string): Promise<boolean> {
  const Key = buildsUnderWayKey(orgId);
  const nowMs = clock.nowMs();
  try {
    await db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key,
        UpdateExpression: 'SET builds.#entry = if_not_exists(builds.#entry, :now)',
        ConditionExpression: 'size(builds) < :max OR attribute_exists(builds.#entry)',
        ExpressionAttributeNames: { '#entry': entry },
        ExpressionAttributeValues: { ':now': nowMs, ':max': BUILDS_UNDER_WAY },
      }),
    );
    return true;
  } catch (error) {
    // No map yet (the organisation's first build): the condition fails on it, and the item is made with this entry.
    if (!isConditionalFailure(error)) throw error;
  }
  try {
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: { ...Key, entity: 'route_builds_under_way', builds: { [entry]: nowMs } },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    return false;
  }
}

/**
 * Takes the build's place among its organisation's builds under way. A full map is checked once (its ended and
 * unwritten builds dropped) and the place tried again; still full, a 429 `rate_limited` whose `Retry-After` is the
 * shortest time one of the builds under way may take (its `time_limit_s` + 30 s, contract 4.10).
 */
export async function takeBuildPlace(orgId: string, planningId: string, buildId: string): Promise<void> {
  const entry = entryOf(planningId, buildId);
  if (await tryPlace(orgId, entry)) return;
  const live = await buildsStillUnderWay(orgId);
  if (live.length < BUILDS_UNDER_WAY && (await tryPlace(orgId, entry))) return;
  const soonestS = Math.max(1, Math.min(...live.map((build) => build.timeLimitS)) + 30);
  throw limitExceeded(
    `your organisation has ${BUILDS_UNDER_WAY} route builds queued or solving, the most it may have at once: ` +
      'build again once one of them has completed or failed',
    Number.isFinite(soonestS) ? soonestS : 30,
  );
}

/** Gives the build's place back; a failure is logged (the check of a full map drops the place later). */
export async function releaseBuildPlace(orgId: string, planningId: string, buildId: string): Promise<void> {
  await dropPlace(orgId, entryOf(planningId, buildId)).catch((error: unknown) =>
    logger.warn('route build place not given back', { build_id: buildId, error: error as Error }),
  );
}
