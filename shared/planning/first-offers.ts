/**
 * The planning job's wave 1 (contract 4.7): its pairs written in bulk at a steady pace (`putFirstOffers`,
 * FIRST_OFFERS_PER_S), and each runsheet's offer group started as its dispatch record (`putFirstGroups`,
 * `addFirstWave`), due in the wave worker's index shortly after the offers expire (EXPIRY_GRACE_MS). The job's pairs
 * carry no index entry of their own: the plan's offer watch covers them (shared/planning/offer-expiry.ts).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { putAll } from '#shared/db/batch';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { groupKey } from '#shared/planning/keys';
import {
  addOpenOffers,
  keptOffers,
  type OfferListing,
  type OpenOffers,
  offeredEntry,
  openOffers,
} from '#shared/planning/offer-groups';
import { type PairRecord, pairItem } from '#shared/planning/pair-records';
import { waveDueKey, wavePlansPartition, wavesPartition } from '#shared/planning/wave-plans';

/** Lists pairs on their runsheet's offer group (a set: listing a pair again changes nothing). */
export async function addToGroup(planId: string, runsheetId: string, pairIds: string[]) {
  if (pairIds.length === 0) return;
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: groupKey(planId, runsheetId),
      UpdateExpression: 'ADD pair_ids :ids SET entity = :entity',
      ExpressionAttributeValues: { ':ids': new Set(pairIds), ':entity': 'runsheet_offers' },
    }),
  );
}

/** A runsheet's wave 1 as the planning job decided it: its pairs and their drivers (none when nobody may be offered it). */
export interface FirstWave {
  runsheetId: string;
  pairIds: string[];
  driverIds: string[];
}

/** The planning job's wave 1: when its offers expire, how many waves a runsheet may have, the job (its pairs' ids). */
interface FirstWaveOf {
  expires: string;
  maxWaves: number;
  jobId: string;
}

/**
 * The dispatch record a runsheet's wave 1 starts (shared/planning/dispatch-records.ts): due in the wave worker's index shortly
 * after its offers expire, or at once when it has none. Its pairs are named by their drivers and the job
 * (shared/planning/offer-groups.ts), not listed by id.
 */
function firstWaveFields(planId: string, group: FirstWave, wave: FirstWaveOf) {
  const due =
    group.pairIds.length > 0 ? new Date(Date.parse(wave.expires) + EXPIRY_GRACE_MS).toISOString() : clock.nowIso();
  return {
    wave: 1,
    waves_allowed: wave.maxWaves,
    open: openOffers(Object.fromEntries(group.pairIds.map((id) => [id, wave.expires]))),
    GSI3PK: wavesPartition(planId, group.runsheetId),
    GSI3SK: waveDueKey(due, planId, group.runsheetId),
    gen: 0,
  };
}

/** The offer groups a planning's runsheets had when its job started, by runsheet id (what `putFirstGroups` keeps). */
export type EarlierGroups = ReadonlyMap<string, OfferListing & { open?: OpenOffers }>;

/**
 * The first run of a planning job: none of its pairs can exist yet (pair ids derive from the job, which no run has
 * taken before), so they are written whole in batches; the groups first, as `addFirstWave` and `putNewPair` do.
 */
export async function putFirstOffers(
  planId: string,
  orgId: string,
  groups: FirstWave[],
  records: PairRecord[],
  wave: FirstWaveOf,
  earlier: EarlierGroups = new Map(),
) {
  await putFirstGroups(planId, orgId, groups, wave, earlier);
  await putAll(mainTableName(), records.map(pairItem), FIRST_OFFERS_IN_FLIGHT, FIRST_OFFERS_PER_S);
}

/**
 * A job's wave 1 groups written whole. A group an earlier job left (`earlier`) is replaced: this job starts the
 * runsheet's dispatch over (the job skips runsheets held or cancelled), but the earlier job's, R3's and X16's pairs stay
 * the runsheet's, listed by id (their drivers as `0#<driver>`), and their open offers counted beside the new ones.
 */
export async function putFirstGroups(
  planId: string,
  orgId: string,
  groups: FirstWave[],
  wave: FirstWaveOf,
  earlier: EarlierGroups = new Map(),
) {
  const groupItems = groups.map((group, i) => {
    const fields = firstWaveFields(planId, group, wave);
    const before = earlier.get(group.runsheetId);
    const kept = before ? keptOffers(before, group.runsheetId) : undefined;
    const offered = [...group.driverIds.map((d) => offeredEntry(1, d)), ...(kept?.offered ?? [])];
    return {
      ...groupKey(planId, group.runsheetId),
      entity: 'runsheet_offers',
      job_id: wave.jobId,
      ...(offered.length > 0 ? { offered: new Set(offered) } : {}),
      ...fields,
      ...(kept && kept.pairIds.length > 0 ? { pair_ids: new Set(kept.pairIds) } : {}),
      ...(kept ? { open: addOpenOffers(fields.open, kept.open) } : {}),
      // The first in the wave worker's registry: the planning's registration (shared/planning/wave-plans.ts).
      ...(i === 0 ? { GSI3PK: wavePlansPartition(orgId) } : {}),
    };
  });
  await putAll(mainTableName(), groupItems, FIRST_OFFERS_IN_FLIGHT, FIRST_OFFERS_PER_S);
}

/**
 * A rerun's wave 1: the pairs named again (sets), the dispatch record started unless an earlier run started it.
 * `register`: the group goes into the wave worker's registry (a chunk's first: shared/planning/wave-plans.ts). On a
 * group an earlier job left (its `job_id` another), the pairs are listed by id, their drivers as `0#<driver>`.
 */
export async function addFirstWave(
  planId: string,
  orgId: string,
  group: FirstWave,
  wave: FirstWaveOf,
  register = false,
) {
  const fields = firstWaveFields(planId, group, wave);
  const listed = group.pairIds.length > 0;
  const write = (named: boolean) =>
    db().send(
      new UpdateCommand({
        TableName: mainTableName(),
        Key: groupKey(planId, group.runsheetId),
        UpdateExpression: `SET entity = :entity, wave = if_not_exists(wave, :wave), waves_allowed = if_not_exists(waves_allowed, :allowed), #open = if_not_exists(#open, :open), GSI3PK = :waves, GSI3SK = if_not_exists(GSI3SK, :due)${named ? ', job_id = if_not_exists(job_id, :job)' : ''}${listed ? ` ADD offered :drivers${named ? '' : ', pair_ids :ids'}` : ''}`,
        ...(named ? { ConditionExpression: 'attribute_not_exists(job_id) OR job_id = :job' } : {}),
        ExpressionAttributeNames: { '#open': 'open' },
        ExpressionAttributeValues: {
          ':entity': 'runsheet_offers',
          ':wave': 1,
          ':allowed': fields.waves_allowed,
          ':open': fields.open,
          ':waves': register ? wavePlansPartition(orgId) : fields.GSI3PK,
          ':due': fields.GSI3SK,
          ...(named ? { ':job': wave.jobId } : {}),
          ...(listed
            ? {
                ':drivers': new Set(group.driverIds.map((d) => offeredEntry(named ? 1 : 0, d))),
                ...(named ? {} : { ':ids': new Set(group.pairIds) }),
              }
            : {}),
        },
      }),
    );
  await write(true).catch((error: unknown) => {
    if (!isConditionalFailure(error)) throw error;
    return write(false);
  });
}

const FIRST_OFFERS_IN_FLIGHT = 4;
/**
 * The first run's pace, items a second: spread over the planning's `PLAN_SHARDS` keys, 250 writes a second a key, under
 * issue 45's 300 (four BatchWriteItems in flight would reach ~5 000 items a second in the cloud: 625 a key).
 */
const FIRST_OFFERS_PER_S = 2_000;

/**
 * How long after its offers' expiry a runsheet is due in the wave worker's index: the worker closes what expired
 * (`expired`) and sends the next wave in the same look, so the contract's 10 seconds hold whatever the offer watch does.
 */
export const EXPIRY_GRACE_MS = 1_000;
