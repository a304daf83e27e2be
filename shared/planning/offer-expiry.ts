/**
 * The expiry sweep's side of the offers: the plan's offer watch (`BPLAN#<plan>#<n> / OFFERS`) carries the earliest
 * open expiry of the planning job's pairs in the sparse sweep index (GSI3 `OFFERS#<org>`, its organisation's list),
 * one entry a planning (`watchOffers`); a pair broadcast one by one (R5) carries its own expiry there. `expireOffers`,
 * run by the offer sweep, closes what is past its expiry through the moves of shared/planning/broadcasts.ts
 * (`system_rejected`, `expired`) and moves or drops each entry.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { dueEntriesByOrg, orgSweepPartition, queryPartitions } from '#shared/db/shards';
import { conflict } from '#shared/errors';
import { closeOffer } from '#shared/planning/broadcasts';
import { pairKey, planIdOf, planPartitions, watchKey } from '#shared/planning/keys';
import { OPEN_OFFER, type PairState } from '#shared/planning/lifecycle';
import { OFFERS, pairFromItem } from '#shared/planning/pair-records';

const watchSweepKey = (expiry: string, planId: string) => `${expiry}#${planId}#OFFERS`;

/**
 * Brings the plan's offer watch forward to `expiry` unless it is due sooner already, and moves its generation either
 * way. The job calls it before its pairs (a job that dies halfway leaves them watched) and again after the last one:
 * a sweep drops or moves the watch only if its generation is the one it read before it read the pairs, so a pair
 * written after that read is never left without a watch.
 */
export async function watchOffers(planId: string, orgId: string, expiry: string): Promise<void> {
  const due = watchSweepKey(expiry, planId);
  const values = { ':due': due, ':one': 1 };
  // Each round loses only to a sweep that moved or dropped the watch in between; a few rounds settle it.
  for (let round = 0; round < 5; round++) {
    try {
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: watchKey(planId),
          UpdateExpression: 'SET entity = :entity, GSI3PK = :offers, GSI3SK = :due ADD gen :one',
          ConditionExpression: 'attribute_not_exists(GSI3SK) OR GSI3SK >= :due',
          ExpressionAttributeValues: {
            ...values,
            ':entity': 'offer_watch',
            ':offers': orgSweepPartition(OFFERS, orgId),
          },
        }),
      );
      return;
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
    try {
      // Due sooner already: only the generation moves (not projected, so the index entry is not rewritten).
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: watchKey(planId),
          UpdateExpression: 'ADD gen :one',
          ConditionExpression: 'GSI3SK < :due',
          ExpressionAttributeValues: values,
        }),
      );
      return;
    } catch (error) {
      // A sweep moved the watch later or dropped it between the two: set it again.
      if (!isConditionalFailure(error)) throw error;
    }
  }
  throw conflict('the offer watch kept changing; retry');
}

/**
 * The open pairs of a plan that its offer watch covers (id, state, history), read by one strongly consistent Query: a
 * pair written before the sweep read the watch is among them. A later wave's pairs are the wave worker's to close
 * (`wave_judged`): left out, as are closed pairs, so that the sweep's work is the open offers, not the day's history.
 */
async function watchedPairs(planId: string) {
  const pairs = await queryPartitions<{ id: string; current_state: PairState; statuses: unknown }>(
    planPartitions(planId),
    {
      TableName: mainTableName(),
      ConsistentRead: true,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :pair)',
      FilterExpression: 'plan_swept = :true AND current_state = :open AND attribute_not_exists(wave_judged)',
      ProjectionExpression: 'id, current_state, statuses',
      ExpressionAttributeValues: { ':pair': 'PAIR#', ':true': true, ':open': OPEN_OFFER },
    },
  );
  return pairs.map(pairFromItem);
}

/** Expired offers of one planning closed at once by the sweep. */
const CLOSES_AT_ONCE = 8;

/**
 * The expiry sweep: every broadcasted pair past its expiry is closed by the system with reason `expired`. Every
 * organisation's list is read (`orgs`: the sweep's run's, read when not given).
 */
export async function expireOffers(orgs?: readonly string[]): Promise<number> {
  const now = clock.nowIso();
  const out = await dueEntriesByOrg(OFFERS, now, 500, orgs);
  let closed = 0;
  let failed: unknown;
  // True unless the close failed; the others are still closed, and this one is retried by the next sweep. A pair of
  // its own entry found closed already is one an earlier version left in the index when it closed: its entry goes.
  const close = (planId: string, pairId: string, expiredTime: string, ownEntry = false) =>
    closeOffer(planId, pairId, 'expired', { at: expiredTime, contended: 'throw' }).then(
      async (record) => {
        if (record) {
          closed++;
          return true;
        }
        // Closed already. (If the drop fails, the next sweep finds the entry again: the others are swept meanwhile.)
        if (ownEntry) await dropSweepEntry(planId, pairId).catch((drop: unknown) => (failed ??= drop));
        return true;
      },
      (error: unknown) => {
        failed ??= error;
        return false;
      },
    );
  for (const item of out.items) {
    const planId = planIdOf(item['PK']);
    const sk = String(item['SK']);
    const sweepKey = String(item['GSI3SK']);
    if (sk.startsWith('PAIR#')) {
      await close(planId, sk.slice('PAIR#'.length), sweepKey.slice(0, sweepKey.indexOf('#')), true);
      continue;
    }
    // The plan's offer watch: close its expired offers, then move the watch to the next open expiry (or drop it),
    // unless a job touched it after this read (its generation moved): the next sweep judges it again.
    const watch = (
      await db().send(new GetCommand({ TableName: mainTableName(), Key: watchKey(planId), ConsistentRead: true }))
    ).Item;
    if (watch?.['GSI3SK'] !== sweepKey) continue;
    let next: string | undefined;
    const open = (await watchedPairs(planId)).flatMap((pair) => {
      if (pair.current_state !== 'broadcasted') return [];
      const expiry = [...pair.statuses].reverse().find((s) => s.action === 'broadcast')?.expired_time;
      return expiry ? [{ id: pair.id, expiry }] : [];
    });
    // The expired ones are closed a few at a time (a big planning's wave expires at once).
    const closedNow = await mapLimited(open, CLOSES_AT_ONCE, async (pair) =>
      pair.expiry < now ? close(planId, pair.id, pair.expiry) : false,
    );
    open.forEach((pair, i) => {
      // A pair that failed to close keeps the watch at its expiry, so that the next sweep tries it again.
      if (closedNow[i]) return;
      if (!next || pair.expiry < next) next = pair.expiry;
    });
    await db()
      .send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: watchKey(planId),
          UpdateExpression: next ? 'SET GSI3SK = :next' : 'REMOVE GSI3PK, GSI3SK',
          // (A watch written before generations existed has none: the same test, on its absence.)
          ConditionExpression: `GSI3SK = :read AND ${watch['gen'] === undefined ? 'attribute_not_exists(gen)' : 'gen = :gen'}`,
          ExpressionAttributeValues: {
            ':read': sweepKey,
            ...(watch['gen'] === undefined ? {} : { ':gen': watch['gen'] }),
            ...(next ? { ':next': watchSweepKey(next, planId) } : {}),
          },
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionalFailure(error)) throw error;
      });
  }
  if (failed) throw failed;
  return closed;
}

/** Removes a closed pair's entry from the sweep's index (one that is open again, or gone, is left alone). */
async function dropSweepEntry(planId: string, pairId: string): Promise<void> {
  await db()
    .send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: pairKey(planId, pairId),
        UpdateExpression: 'REMOVE GSI3PK, GSI3SK',
        ConditionExpression: 'attribute_exists(PK) AND current_state <> :open',
        ExpressionAttributeValues: { ':open': OPEN_OFFER },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalFailure(error)) throw error;
    });
}
