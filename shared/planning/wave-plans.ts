/**
 * The wave worker's work lists in the sweep index (GSI3, issue 45; docs/indexes.md "Shards"). Each planning has its own
 * list of runsheets whose next wave is due to be judged, `WAVES#<plan>#<n>` (its offer groups, by when to look, over
 * the planning's `PLAN_SHARDS` shards by runsheet as its records are: a job writes a group a runsheet in seconds), so
 * no key is shared by every organisation's dispatch: a list takes one planning's closes and waves, and the worker reads
 * a planning's shards at once. The worker finds the lists through a small registry of the plannings that have one,
 * `WAVEPLANS#<org>` (one an organisation: no key of it is shared by organisations; the worker finds the registries
 * through the organisations' listing, shared/db/shards.ts `orgListEntries`), which holds a planning's watch
 * (`BPLAN#<plan>#0 / WAVES`, written when the worker registers it and deleted once its list has stayed empty), and, for
 * a moment, an offer group that a write put there instead of in its planning's list:
 * - a job's chunk writes its first group there (the rest into the planning's list), so the job's registration is
 *   that one group entry, written in the same batch as the others and costing nothing more;
 * - a mark that finds a group out of every list (settled: won, unassigned) puts it there (`if_not_exists`), so a
 *   revived runsheet (X17, a withdrawal) is registered in the same write that makes it due, whatever fails after.
 * The worker registers the planning of every group it finds in the registry, then moves the group to the planning's
 * list. The registry is written once a planning's dispatch starts or comes back, not on every close and wave.
 */
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { orgListEntries, orgSweepPartition, shardOf } from '#shared/db/shards';
import { groupKey, groupRunsheetIdOf, PLAN_SHARDS, planIdOf, waveWatchKey } from '#shared/planning/keys';

/** A planning's list of runsheets whose next wave is due to be judged (GSI3PK: a runsheet's shard), an entry's sort key. */
export const WAVES = 'WAVES';
export const wavesPartition = (planId: string, runsheetId: string) =>
  `${WAVES}#${planId}#${shardOf(runsheetId, PLAN_SHARDS)}`;
const wavesPartitions = (planId: string) => Array.from({ length: PLAN_SHARDS }, (_, n) => `${WAVES}#${planId}#${n}`);
export const waveDueKey = (due: string, planId: string, runsheetId: string) => `${due}#${planId}#${runsheetId}`;

/** The registry of plannings with a wave list: the planning's organisation's (GSI3PK). */
const WAVE_PLANS = 'WAVEPLANS';
export const wavePlansPartition = (orgId: string) => orgSweepPartition(WAVE_PLANS, orgId);

/**
 * How long a registration stands before an empty list may end it: longer than a mark or a job's batch takes to land
 * in the index after the registry entry it follows (the index is eventually consistent).
 */
const REGISTRATION_STANDS_MS = 60_000;

/** Registers the planning (again): its watch in the registry, with a new generation and time. */
async function register(planId: string, orgId: string, nowMs: number) {
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: waveWatchKey(planId),
      UpdateExpression: 'SET entity = :entity, GSI3PK = :reg, GSI3SK = :plan, registered_at = :now ADD gen :one',
      ExpressionAttributeValues: {
        ':entity': 'wave_watch',
        ':reg': wavePlansPartition(orgId),
        ':plan': planId,
        ':now': nowMs,
        ':one': 1,
      },
    }),
  );
}

/**
 * The plannings the registries name, every organisation's (`orgs`: the sweep's run's, read when not given). A group
 * found there has its planning registered, then moves to the planning's list (unless it moved or left since).
 */
export async function registeredPlannings(nowMs: number, orgs?: readonly string[]): Promise<string[]> {
  const entries = await orgListEntries<{ PK: string; SK: string }>(
    WAVE_PLANS,
    { TableName: mainTableName(), IndexName: 'GSI3', ProjectionExpression: 'PK, SK' },
    orgs,
  );
  const plans = new Set(entries.map(({ item }) => planIdOf(item.PK)));
  const registered = new Set<string>();
  for (const { orgId, item: group } of entries) {
    if (!group.SK.startsWith('RSPAIRS#')) continue;
    const planId = planIdOf(group.PK);
    if (!registered.has(planId)) await register(planId, orgId, nowMs);
    registered.add(planId);
    await db()
      .send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: { PK: group.PK, SK: group.SK },
          UpdateExpression: 'SET GSI3PK = :waves',
          ConditionExpression: 'GSI3PK = :reg',
          ExpressionAttributeValues: {
            ':waves': wavesPartition(planId, groupRunsheetIdOf(group.SK)),
            ':reg': wavePlansPartition(orgId),
          },
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionalFailure(error)) throw error;
      });
  }
  return [...plans];
}

/**
 * One page of a planning's list due before `before`, every shard read at once: up to `limit` of each, merged in due
 * order and cut to `limit` (`full`: more may be due). When the list is empty, the planning's registration ends, unless
 * it was made or renewed within `REGISTRATION_STANDS_MS` (a registration after the watch is read moves its generation,
 * and the delete is conditional on the one read).
 */
export async function duePage(
  planId: string,
  before: string,
  limit: number,
  nowMs: number,
): Promise<{ items: Record<string, unknown>[]; full: boolean }> {
  const query = (partition: string, due: boolean, count: number) =>
    db().send(
      new QueryCommand({
        TableName: mainTableName(),
        IndexName: 'GSI3',
        KeyConditionExpression: due ? 'GSI3PK = :pk AND GSI3SK < :before' : 'GSI3PK = :pk',
        ExpressionAttributeValues: { ':pk': partition, ...(due ? { ':before': before } : {}) },
        Limit: count,
      }),
    );
  const pages = await mapLimited(wavesPartitions(planId), PLAN_SHARDS, (partition) => query(partition, true, limit));
  const items = pages.flatMap((page) => page.Items ?? []).sort((a, b) => (a['GSI3SK']! < b['GSI3SK']! ? -1 : 1));
  if (items.length > 0) {
    const full = items.length > limit || pages.some((page) => page.LastEvaluatedKey !== undefined);
    return { items: items.slice(0, limit), full };
  }
  // Nothing due: is anything listed at all? (One shard after another, until one holds an entry.)
  for (const partition of wavesPartitions(planId)) {
    if (((await query(partition, false, 1)).Items ?? []).length > 0) return { items: [], full: false };
  }
  const watch = (
    await db().send(new GetCommand({ TableName: mainTableName(), Key: waveWatchKey(planId), ConsistentRead: true }))
  ).Item;
  if (!watch || Number(watch['registered_at'] ?? 0) > nowMs - REGISTRATION_STANDS_MS) return { items: [], full: false };
  await db()
    .send(
      new DeleteCommand({
        TableName: mainTableName(),
        Key: waveWatchKey(planId),
        ConditionExpression: 'gen = :gen',
        ExpressionAttributeValues: { ':gen': watch['gen'] },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalFailure(error)) throw error;
    });
  return { items: [], full: false };
}

/**
 * Asks the wave worker to look at the runsheet now (its offer group's entry in its planning's wave list, due
 * now; `gen` moves so that a worker that read the group before this judges it again). A withdrawal also allows one
 * wave past `max_waves`: the runsheet goes back to dispatch however many waves it had.
 */
export async function checkWaveSoon(
  planId: string,
  orgId: string,
  runsheetId: string,
  extraWave = false,
): Promise<void> {
  const mark = (raise: boolean) =>
    db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: groupKey(planId, runsheetId),
        // A group out of every list (settled) goes into the registry, so its planning is registered (above).
        UpdateExpression: `SET GSI3PK = if_not_exists(GSI3PK, :waves), GSI3SK = :due${raise ? ', waves_allowed = wave + :one' : ''} ADD gen :one`,
        // The extra wave only raises the limit: a runsheet still short of it keeps the waves it had left.
        ConditionExpression: raise ? 'attribute_exists(wave) AND waves_allowed <= wave' : 'attribute_exists(wave)',
        ExpressionAttributeValues: {
          ':waves': wavePlansPartition(orgId),
          ':due': waveDueKey(clock.nowIso(), planId, runsheetId),
          ':one': 1,
        },
      }),
    );
  try {
    await mark(extraWave);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    if (extraWave) await checkWaveSoon(planId, orgId, runsheetId, false);
  }
}
