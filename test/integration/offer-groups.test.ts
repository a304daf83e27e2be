/**
 * A runsheet's offer group names its pairs by their drivers' `<wave>#<driver>` entries and its job, instead of listing
 * their ids (shared/planning/offer-groups.ts, issue 45 item 3); a rerun's wave 1 on a group an earlier job left lists
 * its pairs by id, so that the earlier job's stay named as they were.
 */

import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

await useLocalServices();
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { groupKey, pairIdOf } = await import('../../shared/planning/keys.ts');
const { addFirstWave } = await import('../../shared/planning/first-offers.ts');
const { groupPairIds, offeredDrivers } = await import('../../shared/planning/offer-groups.ts');

const groupOf = async (planId: string, runsheetId: string) =>
  (
    await db().send(
      new GetCommand({ TableName: mainTableName(), Key: groupKey(planId, runsheetId), ConsistentRead: true }),
    )
  ).Item!;
/** The plannings' organisation (a group registered for waves goes into its list). */
const ORG = randomUUID();
const wave = (jobId: string) => ({ expires: new Date(Date.now() + 60_000).toISOString(), maxWaves: 3, jobId });

describe('an offer group', () => {
  it('names a rerun’s pairs by their drivers and the job, storing no pair id', async () => {
    const [planId, jobId, d1, d2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const first = { runsheetId: 'RS-1', pairIds: [d1, d2].map((d) => pairIdOf(jobId, 'RS-1', d)), driverIds: [d1, d2] };
    // Twice: a rerun after a rerun names the same pairs.
    await addFirstWave(planId, ORG, first, wave(jobId));
    await addFirstWave(planId, ORG, first, wave(jobId));
    const group = await groupOf(planId, 'RS-1');
    expect(group['pair_ids']).toBeUndefined();
    expect(group['open']).toEqual([2, expect.any(String)]);
    expect(groupPairIds(group, 'RS-1').sort()).toEqual([...first.pairIds].sort());
  });

  it('lists by id the pairs of a job other than the one its entries name', async () => {
    const [planId, earlier, later, d1, d2, d3] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    // An earlier job's group at wave 2 (d1 in wave 1, d2 in wave 2), which the later job's first run never reached.
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: {
          ...groupKey(planId, 'RS-1'),
          entity: 'runsheet_offers',
          job_id: earlier,
          offered: new Set([`1#${d1}`, `2#${d2}`]),
          wave: 2,
          waves_allowed: 3,
          open: [0],
          gen: 3,
        },
      }),
    );
    const ours = pairIdOf(later, 'RS-1', d3);
    await addFirstWave(planId, ORG, { runsheetId: 'RS-1', pairIds: [ours], driverIds: [d3] }, wave(later));
    const group = await groupOf(planId, 'RS-1');
    expect(group['job_id']).toBe(earlier);
    expect([...group['pair_ids']]).toEqual([ours]);
    expect(offeredDrivers(group)).toEqual(new Set([d1, d2, d3]));
    expect(groupPairIds(group, 'RS-1').sort()).toEqual(
      [pairIdOf(earlier, 'RS-1', d1), pairIdOf(`${earlier}#2`, 'RS-1', d2), ours].sort(),
    );
  });
});
