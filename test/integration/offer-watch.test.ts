/**
 * The plan's offer watch (shared/planning/offer-expiry.ts): one sweep entry for all of a planning job's pairs. A sweep
 * reads the watch, then the pairs, then moves or drops the watch; a job may write pairs in between (a planning whose
 * offers expire before its job has written them all, or a second job of the same planning). Found by a review: the
 * sweep dropped the watch over pairs it had not seen, and they stayed offered for ever. Also the accept's rival close
 * when a rival keeps changing under it.
 */

import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { withMiddleware } = await import('../support/middleware.ts');
type Middleware = import('../support/middleware.ts').Middleware;
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { orgSweepPartition } = await import('../../shared/db/shards.ts');
const { PLAN_SHARDS, watchKey } = await import('../../shared/planning/keys.ts');
const { asProblem } = await import('../../shared/http/problems.ts');
const { recordEvent } = await import('../../shared/planning/broadcasts.ts');
const { addToGroup } = await import('../../shared/planning/first-offers.ts');
const { expireOffers, watchOffers } = await import('../../shared/planning/offer-expiry.ts');
const { putNewPair, readPair } = await import('../../shared/planning/pair-records.ts');
type PairRecord = import('../../shared/planning/pair-records.ts').PairRecord;

/** The organisation of this file's plannings: its own list in the sweep index, the one the sweeps here read. */
const ORG = randomUUID();
const sweep = () => expireOffers([ORG]);

/** A pair as the planning job writes it: offered, expiring at `expiry`, covered by the plan's watch. */
function jobPair(planId: string, expiry: string, runsheetId: string = randomUUID()): PairRecord {
  const id = randomUUID();
  const at = new Date(Date.parse(expiry) - 5000).toISOString();
  const entry = { reason: null, happened_at_utc: at, saved_at_utc: at };
  return {
    id,
    pair: { id, runsheet: { id: runsheetId, tasks: [] }, driver: { id: randomUUID(), name: 'D' } },
    plan: { id: planId, name: 'Watched' },
    statuses: [
      { ...entry, current_state: 'created', action: 'created', expired_time: null },
      { ...entry, current_state: 'broadcasted', action: 'broadcast', expired_time: expiry },
    ],
    current_state: 'broadcasted',
    org_id: ORG,
    rev: 2,
    offer_ttl_s: 5,
    runsheet_ref: true,
    plan_swept: true,
  };
}

const watchOf = async (planId: string) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: watchKey(planId) }))).Item;
const stateOf = async (planId: string, pairId: string) => (await readPair(planId, pairId))?.current_state;

/**
 * A sweep with `job` run once, just after the sweep has read the watched pairs (the last of its Queries of the
 * planning's shards, which it sends at once: after the first, a later one could still see the job's pair); whether it
 * ran.
 */
async function sweepInterleaved(job: () => Promise<void>): Promise<boolean> {
  let ran = false;
  let read = 0;
  await withMiddleware(
    'job-between',
    (next, context) => async (args) => {
      const out = await next(args);
      const input = args.input as { FilterExpression?: string };
      if (context.commandName === 'QueryCommand' && input.FilterExpression?.includes('plan_swept')) read++;
      if (!ran && read === PLAN_SHARDS) {
        ran = true;
        await job();
      }
      return out;
    },
    sweep,
  );
  return ran;
}

/** Every write of the pair meets a changed revision, as if another writer got in first each time. */
const alwaysChanged =
  (pairId: string): Middleware =>
  (next, context) =>
  async (args) => {
    const input = args.input as { Item?: { SK?: string } };
    if (context.commandName === 'PutItemCommand' && input.Item?.SK === `PAIR#${pairId}`) {
      throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    }
    return next(args);
  };

describe('the plan offer watch', () => {
  it('is not dropped by a sweep over pairs written after it read them', async () => {
    const planId = randomUUID();
    const expiry = new Date(Date.now() - 1000).toISOString();
    const first = jobPair(planId, expiry);
    const late = jobPair(planId, expiry);
    // The job: the watch, then its first pair.
    await watchOffers(planId, ORG, expiry);
    expect(await putNewPair(first)).toBe(true);
    // The sweep reads the watched pairs; just after, the job writes its last pair and touches the watch again.
    const ran = await sweepInterleaved(async () => {
      expect(await putNewPair(late)).toBe(true);
      await watchOffers(planId, ORG, expiry);
    });
    expect(ran).toBe(true);
    expect(await stateOf(planId, first.id)).toBe('rejected');
    // The sweep did not see the late pair: it must leave the watch due (before: dropped, the pair open for ever).
    expect(await stateOf(planId, late.id)).toBe('broadcasted');
    expect((await watchOf(planId))?.['GSI3PK']).toBe(orgSweepPartition('OFFERS', ORG));
    await sweep();
    expect(await stateOf(planId, late.id)).toBe('rejected');
    expect((await watchOf(planId))?.['GSI3PK']).toBeUndefined();
  });

  it('keeps a later job’s pairs watched when an earlier job’s watch is due sooner', async () => {
    const planId = randomUUID();
    const soon = new Date(Date.now() - 1000).toISOString();
    const later = new Date(Date.now() + 60_000).toISOString();
    const old = jobPair(planId, soon);
    await watchOffers(planId, ORG, soon);
    await putNewPair(old);
    const fresh = jobPair(planId, later);
    // The second job: its first watch call keeps the sooner due time, then its pair, then the watch again.
    const ran = await sweepInterleaved(async () => {
      await watchOffers(planId, ORG, later);
      await putNewPair(fresh);
      await watchOffers(planId, ORG, later);
    });
    expect(ran).toBe(true);
    expect(await stateOf(planId, old.id)).toBe('rejected');
    // Still due: the next sweep finds the second job's pair and moves the watch to its expiry.
    expect((await watchOf(planId))?.['GSI3PK']).toBe(orgSweepPartition('OFFERS', ORG));
    await sweep();
    expect(await stateOf(planId, fresh.id)).toBe('broadcasted');
    expect(String((await watchOf(planId))?.['GSI3SK'])).toBe(`${later}#${planId}#OFFERS`);
  });

  it('stays due when a close could not get its turn on a record that kept changing', async () => {
    const planId = randomUUID();
    const expiry = new Date(Date.now() - 1000).toISOString();
    const pair = jobPair(planId, expiry);
    await watchOffers(planId, ORG, expiry);
    await putNewPair(pair);
    // Every write of the pair meets a changed revision (another writer each time): the close gives up with a 409.
    await withMiddleware('contended', alwaysChanged(pair.id), () => sweep().catch((error: unknown) => error));
    expect(await stateOf(planId, pair.id)).toBe('broadcasted');
    // Before: that 409 counted as closed, the watch was dropped and the offer never expired.
    expect((await watchOf(planId))?.['GSI3PK']).toBe(orgSweepPartition('OFFERS', ORG));
    await sweep();
    expect(await stateOf(planId, pair.id)).toBe('rejected');
    expect((await watchOf(planId))?.['GSI3PK']).toBeUndefined();
  });
});

describe('an offer watch written before generations existed', () => {
  it('is still moved on or dropped by the sweep', async () => {
    const planId = randomUUID();
    const expiry = new Date(Date.now() - 1000).toISOString();
    const pair = jobPair(planId, expiry);
    await putNewPair(pair);
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: {
          ...watchKey(planId),
          entity: 'offer_watch',
          GSI3PK: orgSweepPartition('OFFERS', ORG),
          GSI3SK: `${expiry}#${planId}#OFFERS`,
        },
      }),
    );
    await sweep();
    expect(await stateOf(planId, pair.id)).toBe('rejected');
    expect((await watchOf(planId))?.['GSI3PK']).toBeUndefined();
  });
});

describe('an accept whose rival offer kept changing', () => {
  it('answers 503 (the accept is recorded, not a 409 that says nothing was), and its retry closes the rival', async () => {
    const planId = randomUUID();
    const expiry = new Date(Date.now() + 600_000).toISOString();
    const mine = jobPair(planId, expiry);
    const rival = jobPair(planId, expiry, mine.pair.runsheet.id);
    await addToGroup(planId, mine.pair.runsheet.id, [mine.id, rival.id]);
    await putNewPair(mine);
    await putNewPair(rival);
    const happened = new Date().toISOString();
    const failure = await withMiddleware('rival-contended', alwaysChanged(rival.id), () =>
      recordEvent(planId, mine.id, 'accepted', happened).catch((error: unknown) => error),
    );
    // The domain says a dependency is unavailable; the HTTP floor answers it as a 503.
    expect(asProblem(failure)).toMatchObject({ status: 503, code: 'unavailable' });
    expect(await stateOf(planId, mine.id)).toBe('accepted');
    expect(await stateOf(planId, rival.id)).toBe('broadcasted');
    // The client retries the same event: recorded already, and this time the rival is closed.
    expect((await recordEvent(planId, mine.id, 'accepted', happened)).current_state).toBe('accepted');
    expect(await readPair(planId, rival.id)).toMatchObject({
      current_state: 'rejected',
      statuses: expect.arrayContaining([expect.objectContaining({ reason: 'assigned_to_other_driver' })]),
    });
  });
});
