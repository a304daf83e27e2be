/**
 * The wave worker's registry of plannings with a wave list (shared/planning/wave-plans.ts, issue 45): a runsheet
 * brought back into dispatch after its planning's registration ended is registered by the write that makes it due,
 * found by the next sweep and moved to its planning's own list; a registration ends only once the list has stayed
 * empty, and a registration made after the sweep read it keeps it.
 */

import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { withMiddleware } = await import('../support/middleware.ts');
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { groupKey, waveWatchKey } = await import('../../shared/planning/keys.ts');
const { checkWaveSoon } = await import('../../shared/planning/broadcasts.ts');
const { duePage, registeredPlannings, wavePlansPartition, wavesPartition } = await import(
  '../../shared/planning/wave-plans.ts'
);

/** The organisation of these plannings: its own registry, the one the sweeps here read. */
const ORG = randomUUID();
const sweep = () => registeredPlannings(Date.now(), [ORG]);

const itemOf = async (key: Record<string, string>) =>
  (await db().send(new GetCommand({ TableName: mainTableName(), Key: key, ConsistentRead: true }))).Item;
const later = (ms: number) => new Date(Date.now() + ms).toISOString();

/** A runsheet's offer group settled out of every list (won, or unassigned), its planning not registered. */
async function settledGroup() {
  const planId = randomUUID();
  const runsheetId = `RS-${randomUUID().slice(0, 8)}`;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: { ...groupKey(planId, runsheetId), entity: 'runsheet_offers', wave: 3, waves_allowed: 3, gen: 4 },
    }),
  );
  return { planId, runsheetId };
}

/** A runsheet marked due, its planning registered by a sweep, then won: the worker takes it out of the list. */
async function registeredThenWon() {
  const { planId, runsheetId } = await settledGroup();
  await checkWaveSoon(planId, ORG, runsheetId);
  await sweep();
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: groupKey(planId, runsheetId),
      UpdateExpression: 'REMOVE GSI3PK, GSI3SK',
    }),
  );
  return { planId, runsheetId };
}

describe('the registry of plannings with a wave list', () => {
  it('registers the planning of a settled runsheet marked due, and moves the runsheet to its planning’s list', async () => {
    const { planId, runsheetId } = await settledGroup();
    // A withdrawal's mark: the group had no entry, so it goes into the registry in the same write.
    await checkWaveSoon(planId, ORG, runsheetId, true);
    expect((await itemOf(groupKey(planId, runsheetId)))?.['GSI3PK']).toBe(wavePlansPartition(ORG));
    expect(await itemOf(waveWatchKey(planId))).toBeUndefined();

    expect(await sweep()).toContain(planId);
    expect(await itemOf(waveWatchKey(planId))).toMatchObject({
      entity: 'wave_watch',
      GSI3PK: wavePlansPartition(ORG),
      gen: 1,
    });
    expect((await itemOf(groupKey(planId, runsheetId)))?.['GSI3PK']).toBe(wavesPartition(planId, runsheetId));
    const page = await duePage(planId, later(1000), 10, Date.now());
    expect(page.items.map((item) => item['SK'])).toEqual([`RSPAIRS#${runsheetId}`]);

    // A mark on a runsheet in its list keeps it there: the registry is not written again.
    await checkWaveSoon(planId, ORG, runsheetId);
    expect((await itemOf(groupKey(planId, runsheetId)))?.['GSI3PK']).toBe(wavesPartition(planId, runsheetId));
    expect((await itemOf(waveWatchKey(planId)))?.['gen']).toBe(1);
  });

  it('ends a registration once the list is empty and the registration older than a minute, not before', async () => {
    const { planId } = await registeredThenWon();
    expect(await duePage(planId, later(0), 10, Date.now())).toEqual({ items: [], full: false });
    expect(await itemOf(waveWatchKey(planId))).toBeDefined();
    expect(await duePage(planId, later(0), 10, Date.now() + 61_000)).toEqual({ items: [], full: false });
    expect(await itemOf(waveWatchKey(planId))).toBeUndefined();
    expect(await sweep()).not.toContain(planId);
  });

  it('keeps a registration renewed between the sweep’s read of it and its delete', async () => {
    const { planId, runsheetId } = await registeredThenWon();
    // Just after the sweep read the watch, the runsheet comes back (a withdrawal) and a sweep registers it again.
    let renewed = false;
    await withMiddleware(
      'renew-between',
      (next, context) => async (args) => {
        const out = await next(args);
        if (!renewed && (context.commandName === 'GetCommand' || context.commandName === 'GetItemCommand')) {
          renewed = true;
          await checkWaveSoon(planId, ORG, runsheetId, true);
          await sweep();
        }
        return out;
      },
      () => duePage(planId, later(0), 10, Date.now() + 61_000),
    );
    expect(renewed).toBe(true);
    expect(await itemOf(waveWatchKey(planId))).toMatchObject({ gen: 2 });
    expect((await duePage(planId, later(1000), 10, Date.now())).items.map((item) => item['SK'])).toEqual([
      `RSPAIRS#${runsheetId}`,
    ]);
  });
});

describe('the sweep lists of two organisations (issue 45: one list an organisation)', () => {
  it('take their entries under two keys, each with its organisation’s id, and the sweeps find both', async () => {
    const { createOrganisation } = await import('../../shared/accounts/organisations.ts');
    const { watchOffers } = await import('../../shared/planning/offer-expiry.ts');
    const { dueEntriesByOrg } = await import('../../shared/db/shards.ts');
    const { activeJobsPartition, ACTIVE_JOBS } = await import('../../shared/workers/active-jobs.ts');
    const { watchKey } = await import('../../shared/planning/keys.ts');
    const orgs = await Promise.all(
      ['Sweep A', 'Sweep B'].map((name) => createOrganisation({ name, kind: 'merchant' })),
    );
    const due = new Date(Date.now() - 1000).toISOString();
    const made = await Promise.all(
      orgs.map(async ({ id: orgId }) => {
        const { planId, runsheetId } = await settledGroup();
        // Each planning's registration, offer watch and job entry, as their write paths make them.
        await checkWaveSoon(planId, orgId, runsheetId);
        await watchOffers(planId, orgId, due);
        await db().send(
          new PutCommand({
            TableName: mainTableName(),
            Item: {
              PK: `IMPORTJOB#${planId}`,
              SK: 'JOB',
              entity: 'import_job',
              id: planId,
              GSI3PK: activeJobsPartition(orgId),
              GSI3SK: due,
            },
          }),
        );
        return { orgId, planId, runsheetId };
      }),
    );
    const [a, b] = made;
    // Each entry is under its own organisation's key, never a key the two share (before: `<list>#<shard>`).
    const keysOf = async ({ planId, runsheetId }: { planId: string; runsheetId: string }) => [
      (await itemOf(groupKey(planId, runsheetId)))?.['GSI3PK'],
      (await itemOf(watchKey(planId)))?.['GSI3PK'],
      (await itemOf({ PK: `IMPORTJOB#${planId}`, SK: 'JOB' }))?.['GSI3PK'],
    ];
    expect(await keysOf(a!)).toEqual([`WAVEPLANS#${a!.orgId}`, `OFFERS#${a!.orgId}`, `ACTIVEJOBS#${a!.orgId}`]);
    expect(await keysOf(b!)).toEqual([`WAVEPLANS#${b!.orgId}`, `OFFERS#${b!.orgId}`, `ACTIVEJOBS#${b!.orgId}`]);
    // The sweeps find the lists through the organisations' listing: both organisations' entries, in one read each.
    const plans = await registeredPlannings(Date.now());
    expect(plans).toEqual(expect.arrayContaining([a!.planId, b!.planId]));
    const offers = await dueEntriesByOrg('OFFERS', new Date().toISOString(), 1000);
    expect(offers.items.map((item) => item['PK'])).toEqual(
      expect.arrayContaining([watchKey(a!.planId).PK, watchKey(b!.planId).PK]),
    );
    const jobs = await dueEntriesByOrg(ACTIVE_JOBS, new Date().toISOString(), 1000);
    expect(jobs.items.map((item) => item['id'])).toEqual(expect.arrayContaining([a!.planId, b!.planId]));
  });
});
