/**
 * Broadcast pair records (R1–R8): one item per runsheet-driver pair (`BPLAN#<plan>#<n> / PAIR#<pair>`) with its full
 * status history. Legality is judged against the current state in arrival order; `statuses[]` is kept in the order
 * the events happened; the same event twice is recorded once. Each write is conditional on the record's revision.
 * Accepting also claims the runsheet (`ASSIGN#<runsheet>`, condition: nobody has) in the same transaction, so of two
 * simultaneous accepts exactly one wins; the runsheet's other open pairs are then closed by the system.
 * A runsheet's pairs are named by its offer group (`BPLAN#<plan>#<n> / RSPAIRS#<runsheet>`: its drivers offered, by
 * wave, and the few pairs listed by id, shared/planning/offer-groups.ts), which the accept reads to find the rivals. The planning job's pairs do not copy their runsheet (`runsheet_ref`: R1/R2
 * assemble it from the planning's runsheet item) and carry no index entry: the plan's offer watch
 * (`BPLAN#<plan>#<n> / OFFERS`) carries the earliest open expiry of them all in the sparse sweep index (GSI3
 * `OFFERS#<org>`, its organisation's list), one entry a planning. A pair broadcast one by one (R5) carries its own
 * expiry there.
 */

import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { describeCaller } from '#shared/auth/access';
import { type Caller, hasRole } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { mapLimited } from '#shared/concurrency';
import { putAll } from '#shared/db/batch';
import {
  cancelledIndexes,
  db,
  getAll,
  isConditionalFailure,
  mainTableName,
  queryAll,
  type TransactItem,
  transactWrite,
} from '#shared/db/client';
import { type PageRequest, queryPage, queryPartitionsPage } from '#shared/db/paging';
import { dueEntriesByOrg, orgSweepPartition, queryPartitions } from '#shared/db/shards';
import { conflict, dependencyUnavailable, forbidden, invalidAt, isDomainError, notFound } from '#shared/errors';
import { publishEvent } from '#shared/notifications/realtime';
import {
  assignKey,
  driverRunsheetKeys,
  groupKey,
  liveRunsheetKeys,
  pairKey,
  planIdOf,
  planPartitions,
  watchKey,
  winsKey,
} from '#shared/planning/keys';
import {
  driverAtCapacity,
  isOpenPair,
  OPEN_OFFER,
  PAIR_MOVES,
  type PairAction,
  type PairState,
  pairMove,
  pairRefusal,
  pairRunsheetTaken,
  pairStateAfter,
  runsheetRefusal,
} from '#shared/planning/lifecycle';
import {
  addOpenOffers,
  groupPairIds,
  keptOffers,
  type OfferListing,
  type OpenOffers,
  offeredEntry,
  openOffers,
} from '#shared/planning/offer-groups';
import { planningRunsheets } from '#shared/planning/offered-runsheets';
import { findPlanning, visiblePlanning } from '#shared/planning/planning-records';
import { JOB_DEFAULTS } from '#shared/planning/schemas';
import { waveDueKey, wavePlansPartition, wavesPartition } from '#shared/planning/wave-plans';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';

export type { PairAction, PairState } from '#shared/planning/lifecycle';

/** The closes after which the runsheet may need its next wave (not those that mean somebody has it, or nobody wants it). */
const NO_WAVE_AFTER = new Set(['assigned_to_other_driver', 'runsheet_cancelled']);

export interface StatusEntry {
  current_state: PairState;
  action: PairAction;
  reason: string | null;
  expired_time: string | null;
  happened_at_utc: string;
  saved_at_utc: string;
}

export interface PairRecord {
  id: string;
  pair: {
    id: string;
    runsheet: { id: string; name?: string; tasks: unknown[] };
    driver: { id: string; name: string };
  };
  plan: { id: string; name?: string };
  statuses: StatusEntry[];
  current_state: PairState;
  org_id: string;
  rev: number;
  offer_ttl_s: number;
  /** The runsheet is the planning's (`pair.runsheet` stored without its tasks; reads assemble it). */
  runsheet_ref?: boolean;
  /** The plan's offer watch covers this pair's expiry (the planning job's pairs), not an index entry of its own. */
  plan_swept?: boolean;
  /**
   * A later wave's pair (contract 4.7): the wave worker closes it when it expires (its runsheet is due in the wave
   * worker's index then), so the plan's offer watch is neither moved for it nor reads it.
   */
  wave_judged?: boolean;
  /**
   * The planning's `version_seq` when the pair took its runsheet (R3, or the planning job): its tasks show it as
   * their `version_seq` (spec: present on tasks inside pair records). Absent on records written before it was kept.
   */
  version_seq?: number;
}

const watchSweepKey = (expiry: string, planId: string) => `${expiry}#${planId}#OFFERS`;

/**
 * A status entry as stored (issue 45): a tuple `[action, happened_at_utc, saved_at_utc, reason?, expired_time?]`
 * (trailing nulls left off; the state follows from the action), so that a pair record stays under 1 KB after three
 * entries and each write of it costs 1 WCU (2 in a transaction). The API shows the whole entry (`toPairView`).
 */
type StoredStatus = [PairAction, string, string, (string | null)?, (string | null)?];

function storedStatus(status: StatusEntry): StoredStatus {
  const tuple: StoredStatus = [
    status.action,
    status.happened_at_utc,
    status.saved_at_utc,
    status.reason,
    status.expired_time,
  ];
  while (tuple.length > 3 && tuple.at(-1) === null) tuple.pop();
  return tuple;
}

/** A stored entry read back whole (an entry stored whole, as before issue 45, reads as it is). */
function statusOf(stored: StoredStatus | StatusEntry): StatusEntry {
  if (!Array.isArray(stored)) return stored;
  const [action, happened, saved, reason, expired] = stored;
  return {
    current_state: pairStateAfter(action),
    action,
    reason: reason ?? null,
    expired_time: expired ?? null,
    happened_at_utc: happened,
    saved_at_utc: saved,
  };
}

/** A stored pair item (or a projection of it holding `statuses`) with its status entries read back whole. */
export function pairFromItem<T extends { statuses?: unknown }>(
  item: T,
): Omit<T, 'statuses'> & { statuses: StatusEntry[] } {
  const statuses = (item.statuses as (StoredStatus | StatusEntry)[] | undefined) ?? [];
  return { ...item, statuses: statuses.map(statusOf) };
}

/**
 * A pair record the service writes itself (the planning job's, a wave's, a dispatcher's): its runsheet is the
 * planning's (`runsheet_ref`: R1/R2 fill in its tasks, the record stays small), its expiry is watched by the plan's
 * offer watch or the wave worker (`plan_swept`). With `offer`, it is written already broadcast (the created and
 * broadcast events in one write); without, created.
 */
export function servicePair(input: {
  id: string;
  planning: { id: string; name: string; org_id: string; version_seq: number };
  runsheet: { id: string; name?: string | undefined };
  driver: { id: string; name: string };
  at: string;
  offerTtlS: number;
  offer?: { expires: string; reason: string | null };
  /** The wave worker closes it at its expiry (a later wave's pair), not the plan's offer watch. */
  waveJudged?: boolean;
}): PairRecord {
  const { id, planning, runsheet, driver, at, offer } = input;
  const created: StatusEntry = {
    current_state: 'created',
    action: 'created',
    reason: null,
    expired_time: null,
    happened_at_utc: at,
    saved_at_utc: at,
  };
  const broadcast: StatusEntry[] = offer
    ? [
        {
          current_state: 'broadcasted',
          action: 'broadcast',
          reason: offer.reason,
          expired_time: offer.expires,
          happened_at_utc: at,
          saved_at_utc: at,
        },
      ]
    : [];
  return {
    id,
    pair: {
      id,
      runsheet: { id: runsheet.id, ...(runsheet.name ? { name: runsheet.name } : {}), tasks: [] },
      driver: { id: driver.id, name: driver.name },
    },
    plan: { id: planning.id, name: planning.name },
    statuses: [created, ...broadcast],
    current_state: offer ? 'broadcasted' : 'created',
    org_id: planning.org_id,
    rev: offer ? 2 : 1,
    offer_ttl_s: input.offerTtlS,
    runsheet_ref: true,
    plan_swept: true,
    ...(input.waveJudged ? { wave_judged: true } : {}),
    version_seq: planning.version_seq,
  };
}

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

/** The largest epoch milliseconds a sort key counts down from (year 2286): newest history first in ascending order. */
const LATEST_MS = 9_999_999_999_999;

/**
 * A driver's offers (X12) in GSI2 `DRIVER#<id>#OFFERS`, read through: an open offer sorts `0#<expired_time>…`
 * (soonest to expire first), any other pair that was ever offered `1#<ms to the year 2286 from its last event>…`
 * (newest first after the open ones). A pair never broadcast has no entry. The entry follows the pair's state.
 */
function driverOfferKeys(record: PairRecord, offer: StatusEntry | undefined) {
  if (!record.statuses.some((s) => s.action === 'broadcast')) return {};
  const tail = `${record.plan.id}#${record.id}`;
  const last = Math.max(...record.statuses.map((s) => Date.parse(s.happened_at_utc)));
  return {
    GSI2PK: `DRIVER#${record.pair.driver.id}#OFFERS`,
    GSI2SK: offer?.expired_time
      ? `0#${offer.expired_time}#${tail}`
      : `1#${String(LATEST_MS - last).padStart(13, '0')}#${tail}`,
  };
}

/**
 * The stored item of a record: its indexes follow its state. A record read from the table carries the index entries
 * of its former state: they are dropped and set again from the new one, so a pair that closes leaves the sweep's
 * index (GSI3 `OFFERS`, where R5 put it) instead of keeping an entry every sweep would read again.
 */
export function pairItem(record: PairRecord) {
  const offer =
    record.current_state === 'broadcasted'
      ? [...record.statuses].reverse().find((s) => s.action === 'broadcast')
      : undefined;
  const {
    GSI2PK: _offers,
    GSI2SK: _offersAt,
    GSI3PK: _sweep,
    GSI3SK: _dueAt,
    ...fields
  } = record as PairRecord & Record<string, unknown>;
  return {
    ...fields,
    statuses: record.statuses.map(storedStatus),
    ...pairKey(record.plan.id, record.id),
    entity: 'pair_record',
    ...(offer?.expired_time && !record.plan_swept
      ? {
          GSI3PK: orgSweepPartition(OFFERS, record.org_id),
          GSI3SK: `${offer.expired_time}#${record.plan.id}#${record.id}`,
        }
      : {}),
    ...driverOfferKeys(record, offer),
  };
}

/**
 * A pair record as the API shows it (R1, R2): the spec's Broadcast pair record, member by member, never the stored
 * item (its keys, index entries, `entity`, revision and bookkeeping stay in storage). Each task carries the
 * `version_seq` of the planning the pair took it at (a record from before it was kept: 1, the first version).
 */
export function toPairView(record: PairRecord) {
  const versionSeq = record.version_seq ?? 1;
  const { runsheet, driver } = record.pair;
  return {
    id: record.id,
    pair: {
      id: record.pair.id,
      runsheet: {
        id: runsheet.id,
        ...(runsheet.name !== undefined ? { name: runsheet.name } : {}),
        tasks: runsheet.tasks.map((task) => ({ ...(task as Record<string, unknown>), version_seq: versionSeq })),
      },
      driver: { id: driver.id, name: driver.name },
    },
    plan: { id: record.plan.id, ...(record.plan.name !== undefined ? { name: record.plan.name } : {}) },
    statuses: record.statuses.map((status) => ({
      current_state: status.current_state,
      action: status.action,
      reason: status.reason,
      expired_time: status.expired_time,
      happened_at_utc: status.happened_at_utc,
      saved_at_utc: status.saved_at_utc,
    })),
    current_state: record.current_state,
  };
}

/** The records as the API shows them: a referenced runsheet is filled in from the planning's runsheet item. */
async function assembled(planId: string, records: PairRecord[], all = false) {
  const wanted = [...new Set(records.filter((r) => r.runsheet_ref).map((r) => r.pair.runsheet.id))];
  const runsheets = wanted.length === 0 ? new Map() : await planningRunsheets(planId, all ? undefined : wanted);
  return records.map((record) => {
    if (!record.runsheet_ref) return toPairView(record);
    const stored = runsheets.get(record.pair.runsheet.id);
    const runsheet = {
      id: record.pair.runsheet.id,
      ...(record.pair.runsheet.name !== undefined ? { name: record.pair.runsheet.name } : {}),
      tasks: stored?.tasks ?? [],
    };
    return toPairView({ ...record, pair: { ...record.pair, runsheet } });
  });
}

function entry(
  action: PairAction,
  state: PairState,
  happenedAt: string,
  reason: string | null,
  expiredTime: string | null,
): StatusEntry {
  return {
    current_state: state,
    action,
    reason,
    expired_time: expiredTime,
    happened_at_utc: toUtcIso(happenedAt),
    saved_at_utc: clock.nowIso(),
  };
}

/** Inserts `status` where it happened (after any entry of the same instant: ties by arrival). */
function inHappenedOrder(statuses: StatusEntry[], status: StatusEntry): StatusEntry[] {
  const index = statuses.findIndex((s) => s.happened_at_utc > status.happened_at_utc);
  return index === -1 ? [...statuses, status] : [...statuses.slice(0, index), status, ...statuses.slice(index)];
}

/** Writes a pair record unless one with its id exists; false when it did (the record there stands). */
export async function putNewPair(record: PairRecord): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: pairItem(record),
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/** R3. */
export async function createPair(input: {
  pair: Omit<PairRecord['pair'], 'driver'> & { driver: { id: string; name?: string | undefined } };
  plan: { id: string; name?: string | undefined };
  happened_at_utc: string;
}): Promise<PairRecord> {
  const planning = await findPlanning(input.plan.id);
  if (!planning) throw invalidAt('plan.id', 'names no planning');
  // A pair record names its driver (spec: `driver (id, name)`): the worker's name, else the user's.
  const name = input.pair.driver.name ?? (await getUser(input.pair.driver.id))?.name ?? '';
  const record: PairRecord = {
    id: input.pair.id,
    pair: { ...input.pair, driver: { id: input.pair.driver.id, name } },
    plan: { id: planning.id, name: input.plan.name ?? planning.name },
    statuses: [entry('created', 'created', input.happened_at_utc, null, null)],
    current_state: 'created',
    org_id: planning.org_id,
    rev: 1,
    offer_ttl_s: planning.job?.offer_ttl_s ?? 900,
    version_seq: planning.version_seq,
  };
  if (!(await putNewPair(record))) {
    const existing = await readPair(input.plan.id, input.pair.id);
    const same = existing?.statuses.some(
      (s) => s.action === 'created' && s.happened_at_utc === toUtcIso(input.happened_at_utc),
    );
    if (!same) throw conflict('this pair was already created');
    // A retry completes what the first run may not have: the listing on the runsheet's offer group.
    await addToGroup(planning.id, existing!.pair.runsheet.id, [existing!.id]);
    return existing!;
  }
  await addToGroup(planning.id, record.pair.runsheet.id, [record.id]);
  return record;
}

export async function readPair(planId: string, pairId: string, consistent = false): Promise<PairRecord | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: pairKey(planId, pairId), ConsistentRead: consistent }),
  );
  return out.Item ? (pairFromItem(out.Item) as unknown as PairRecord) : undefined;
}

const CONTENDED = 'the pair record kept changing; retry';

/**
 * True when a system close found the pair closed already (its move is illegal now: a 409 that records nothing), not
 * when it could not get its turn on a record that kept changing.
 */
/** A close that found the pair closed already (not one that lost to a contended write: that one is retried). */
export const closedAlready = (error: unknown) => isDomainError(error, 'conflict') && error.message !== CONTENDED;

/** R4–R8. `caller` is checked when the action is a driver's own (the paired driver may accept or reject). */
export async function recordEvent(
  planId: string,
  pairId: string,
  action: Exclude<PairAction, 'created'>,
  happenedAt: string,
  options: {
    reason?: string | null | undefined;
    caller?: Caller;
    /** The wave worker's own closes: it judges the runsheet right after, so it is not marked due for a look. */
    judgedNow?: boolean;
  } = {},
): Promise<PairRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    // After a lost race, read what won it (an eventually consistent read could hand back the same old revision).
    const record = await readPair(planId, pairId, attempt > 0);
    if (!record) throw notFound('pair record');
    if (
      options.caller &&
      hasRole(options.caller, 'Driver', 'OrgDriver') &&
      options.caller.id !== record.pair.driver.id
    ) {
      throw notFound('pair record');
    }
    const happened = toUtcIso(happenedAt);
    if (record.statuses.some((s) => s.action === action && s.happened_at_utc === happened)) {
      // Recorded already: by this very event's earlier try, whose effects may have failed after the commit (the
      // client got a 503 and retries). The effects are sent again; each is safe to repeat.
      if (record.current_state === PAIR_MOVES[action].to) await afterEvent(record, action, options.judgedNow);
      return record;
    }
    const to = pairMove(record.current_state, action);
    if (!to) throw await refusal(record, action, options.caller);
    const expired =
      action === 'broadcast' ? new Date(Date.parse(happened) + record.offer_ttl_s * 1000).toISOString() : null;
    const next: PairRecord = {
      ...record,
      statuses: inHappenedOrder(record.statuses, entry(action, to, happened, options.reason ?? null, expired)),
      current_state: to,
      rev: record.rev + 1,
    };
    const put = {
      TableName: mainTableName(),
      Item: pairItem(next),
      ConditionExpression: 'rev = :rev',
      ExpressionAttributeValues: { ':rev': record.rev },
    };
    try {
      // An accept (or a dispatcher's assignment) also claims the runsheet and counts it against the driver's limit,
      // a withdrawal gives both back: transactions. Any other move writes the pair alone.
      if (action === 'accepted' || action === 'assigned') {
        const limit = await runsheetLimit(planId);
        await transactWrite([{ Put: put }, ...claimWrites(record, happened, limit)]);
      } else if (action === 'withdrawn') {
        await transactWrite([{ Put: put }, ...releaseWrites(record)]);
      } else await db().send(new PutCommand(put));
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      if (action === 'accepted' || action === 'assigned') {
        const cancelled = cancelledIndexes(error);
        if (cancelled.includes(1)) throw await refusal(record, action);
        if (cancelled.includes(2)) throw await atCapacity(record, options.caller);
      }
      if (action === 'withdrawn' && cancelledIndexes(error).some((i) => i > 0)) {
        const claim = await db().send(
          new GetCommand({
            TableName: mainTableName(),
            Key: assignKey(planId, record.pair.runsheet.id),
            ConsistentRead: true,
          }),
        );
        const started = claim.Item?.['pair_id'] === record.id && claim.Item['started_at'];
        throw runsheetRefusal('give_back', {
          id: record.pair.runsheet.id,
          // Under way (its driver reported a task), or no longer this pair's (cancelled or reassigned).
          status: started ? 'in_progress' : 'cancelled',
          ...(started ? { started_at: String(claim.Item!['started_at']) } : {}),
        });
      }
      continue; // the record changed meanwhile: judge again against its new state
    }
    await afterEvent(next, action, options.judgedNow);
    return next;
  }
  throw conflict(CONTENDED);
}

/** The planning's `max_runsheets_per_driver` (its job's, or the default when it has none). */
async function runsheetLimit(planId: string): Promise<number> {
  const planning = await findPlanning(planId);
  return planning?.job?.max_runsheets_per_driver ?? JOB_DEFAULTS.max_runsheets_per_driver;
}

/**
 * What a win writes beside its pair: the runsheet's claim (nobody has it) and the driver's count of the planning's
 * runsheets (below the limit). Of two simultaneous accepts of one runsheet, or of one driver at their last place,
 * exactly one commits.
 */
function claimWrites(record: PairRecord, happenedAt: string, limit: number): TransactItem[] {
  const planId = record.plan.id;
  return [
    {
      Put: {
        TableName: mainTableName(),
        Item: {
          ...assignKey(planId, record.pair.runsheet.id),
          // The driver's app names a runsheet by its id alone (X20): its claim is found in the driver's list.
          ...driverRunsheetKeys(record.pair.driver.id, record.pair.runsheet.id, planId),
          // The clock check's list of runsheets under way (late-risk.ts), until its last task finishes.
          ...liveRunsheetKeys(record.org_id, record.pair.driver.id, record.pair.runsheet.id),
          entity: 'runsheet_assignment',
          pair_id: record.id,
          driver_id: record.pair.driver.id,
          driver_name: record.pair.driver.name,
          assigned_at: clock.nowIso(),
          happened_at_utc: happenedAt,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Update: {
        TableName: mainTableName(),
        Key: winsKey(planId, record.pair.driver.id),
        UpdateExpression: 'SET entity = :entity ADD wins :one',
        ConditionExpression: 'attribute_not_exists(wins) OR wins < :limit',
        ExpressionAttributeValues: { ':entity': 'driver_wins', ':one': 1, ':limit': limit },
      },
    },
  ];
}

/** A withdrawal's other writes: the claim goes (if it is still this pair's) and the driver's count comes down. */
function releaseWrites(record: PairRecord): TransactItem[] {
  const planId = record.plan.id;
  return [
    {
      Delete: {
        TableName: mainTableName(),
        Key: assignKey(planId, record.pair.runsheet.id),
        // A runsheet under way (contract 4.8: its driver reported a task) is no longer given back.
        ConditionExpression: 'pair_id = :pair AND attribute_not_exists(started_at)',
        ExpressionAttributeValues: { ':pair': record.id },
      },
    },
    {
      Update: {
        TableName: mainTableName(),
        Key: winsKey(planId, record.pair.driver.id),
        UpdateExpression: 'ADD wins :minus',
        ConditionExpression: 'wins > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
      },
    },
  ];
}

/** The 409 of a win the driver's runsheet limit refuses. */
async function atCapacity(record: PairRecord, caller?: Caller) {
  return driverAtCapacity(await runsheetLimit(record.plan.id), !!caller && hasRole(caller, 'Driver', 'OrgDriver'));
}

/**
 * The 409 for a move the record's state does not allow (lifecycle.ts says it). An accept of a runsheet that another
 * driver holds is `runsheet_already_assigned` whatever became of this pair (closed by the system, or still open when
 * the claim lost): a driver's app needs only that code to tell its user the runsheet is gone.
 */
async function refusal(record: PairRecord, action: Exclude<PairAction, 'created'>, caller?: Caller) {
  if (action === 'accepted' || action === 'assigned') {
    const claim = await db().send(
      new GetCommand({
        TableName: mainTableName(),
        Key: assignKey(record.plan.id, record.pair.runsheet.id),
        ConsistentRead: true,
      }),
    );
    if (claim.Item && claim.Item['pair_id'] !== record.id) return pairRunsheetTaken(record, claim.Item['assigned_at']);
  }
  return pairRefusal(record, action, !!caller && hasRole(caller, 'Driver', 'OrgDriver'));
}

/**
 * What a pair's event is about: the pair and its move. A pair makes each move at most once (PAIR_MOVES only goes forward),
 * so this names one event; its retry (same action, same happened_at_utc) names the same one. It keys the WebSocket
 * frames' `id` and the partners' `webhook-id` alike.
 */
export const pairEventKey = (pairId: string, action: PairAction) => `${pairId}:${action}`;

/** The `reason` of a `pair.rejected` event when the driver declined the offer (R7), which carries none of its own. */
export const DECLINED_BY_DRIVER = 'declined_by_driver';

/** `offer.new` on `user.<driver>`: what the driver needs to answer it (R6/R7 take the plan and the pair). */
export const offerNew = (record: PairRecord, expiredTime: string | null) => ({
  key: pairEventKey(record.id, 'broadcast'),
  data: {
    pair_id: record.id,
    planning_id: record.plan.id,
    runsheet_id: record.pair.runsheet.id,
    expired_time: expiredTime,
  },
});

async function afterEvent(record: PairRecord, action: PairAction, judgedNow = false): Promise<void> {
  const channel = `planning.${record.plan.id}`;
  const driverChannel = `user.${record.pair.driver.id}`;
  const data = {
    pair_id: record.id,
    runsheet_id: record.pair.runsheet.id,
    driver_id: record.pair.driver.id,
    current_state: record.current_state,
  };
  const last = record.statuses.findLast((s) => s.action === action);
  // A failure here is the request's (503): the change is recorded, and the retry of the same event (same action,
  // same happened_at_utc) comes back through recordEvent's "recorded already" path and sends these again, with the
  // same ids. The closing of rival offers is part of it, so an accept never leaves them open.
  const key = pairEventKey(record.id, action);
  // Every closure says why (contract 4.7): the system's moves carry their reason; a driver's own decline, which R7
  // gives none, is `declined_by_driver`, so a program tells it from the system's closures by the reason alone.
  const reason = last?.reason ?? (action === 'rejected' ? DECLINED_BY_DRIVER : null);
  // A close that may leave the runsheet without an open offer asks the wave worker to look at it now (contract 4.7).
  // First: a failure after it still leaves the runsheet looked at. Only the planning job's runsheets have waves.
  const closes = action === 'rejected' || action === 'system_rejected' || action === 'withdrawn';
  if (closes && record.plan_swept && !judgedNow && !NO_WAVE_AFTER.has(reason ?? '')) {
    await checkWaveSoon(record.plan.id, record.org_id, record.pair.runsheet.id, action === 'withdrawn');
  }
  if (action === 'broadcast') {
    await publishEvent(driverChannel, 'offer.new', offerNew(record, last?.expired_time ?? null));
  } else if (action === 'accepted' || action === 'assigned') {
    // The win is told before the closes it causes (contract 4.7).
    const event = action === 'accepted' ? 'pair.accepted' : 'pair.assigned';
    await publishEvent(channel, event, { key, data });
    await publishPartnerEvent(record.org_id, event, data, key);
    await closeOtherPairs(record);
    await closeAtCapacity(record);
    await publishEvent(driverChannel, 'runsheet.assigned', {
      key,
      data: { pair_id: record.id, planning_id: record.plan.id, runsheet_id: record.pair.runsheet.id },
    });
  } else if (action === 'withdrawn') {
    await publishEvent(channel, 'pair.withdrawn', { key, data: { ...data, reason } });
    await publishPartnerEvent(record.org_id, 'pair.withdrawn', { ...data, reason }, key);
  } else if (action === 'rejected' || action === 'system_rejected') {
    await publishEvent(channel, 'pair.rejected', { key, data: { ...data, reason } });
    // The driver is told when the system closed their offer (expired, taken by another driver, ...), not of their own
    // rejection.
    if (action === 'system_rejected') {
      await publishEvent(driverChannel, 'offer.closed', {
        key,
        data: { pair_id: record.id, planning_id: record.plan.id, runsheet_id: record.pair.runsheet.id, reason },
      });
    }
    await publishPartnerEvent(record.org_id, 'pair.rejected', { ...data, reason }, key);
  }
}

/** The pairs (id and state) named, read consistently: a rival written a moment before the accept is among them. */
const pairStates = (planId: string, pairIds: string[]) =>
  getAll<{ id: string; current_state: PairState }>(
    mainTableName(),
    pairIds.map((id) => pairKey(planId, id)),
    { ProjectionExpression: 'id, current_state', ConsistentRead: true },
  );

/** The pairs a runsheet was offered in, from its offer group read consistently. */
async function runsheetPairIds(planId: string, runsheetId: string): Promise<string[]> {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: groupKey(planId, runsheetId), ConsistentRead: true }),
  );
  return groupPairIds(out.Item as OfferListing | undefined, runsheetId);
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
        // A group out of every list (settled) goes into the registry, so its planning is registered (wave-plans.ts).
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

/**
 * How long after its offers' expiry a runsheet is due in the wave worker's index: the worker closes what expired
 * (`expired`) and sends the next wave in the same look, so the contract's 10 seconds hold whatever the offer watch does.
 */
export const EXPIRY_GRACE_MS = 1_000;

/** The expiry sweep's work lists: plans' offer watches and R5's pairs (`OFFERS#<org>`, one an organisation). */
export const OFFERS = 'OFFERS';

/**
 * After a win that fills the driver's last place (`max_runsheets_per_driver`): their other open offers of the
 * planning are closed (`driver_at_capacity`) at once, so those runsheets move on to their next wave.
 */
async function closeAtCapacity(winner: PairRecord): Promise<void> {
  const planId = winner.plan.id;
  const driverId = winner.pair.driver.id;
  const [wins, limit] = await Promise.all([
    db().send(new GetCommand({ TableName: mainTableName(), Key: winsKey(planId, driverId), ConsistentRead: true })),
    runsheetLimit(planId),
  ]);
  if (Number(wins.Item?.['wins'] ?? 0) < limit) return;
  // The driver's open offers (keys only: an open offer's sort key names its plan, `0#<expiry>#<plan>#<pair>`).
  const open = await queryAll<{ SK: string; GSI2SK: string }>({
    TableName: mainTableName(),
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :pk AND begins_with(GSI2SK, :open)',
    ExpressionAttributeValues: { ':pk': `DRIVER#${driverId}#OFFERS`, ':open': '0#' },
    ProjectionExpression: 'SK, GSI2SK',
  });
  for (const offer of open) {
    const pairId = offer.SK.slice('PAIR#'.length);
    if (!offer.GSI2SK.endsWith(`#${planId}#${pairId}`) || pairId === winner.id) continue;
    await recordEvent(planId, pairId, 'system_rejected', clock.nowIso(), { reason: 'driver_at_capacity' }).catch(
      (error: unknown) => {
        if (!closedAlready(error)) throw error;
      },
    );
  }
}

/** After an accept: every other open pair of the runsheet is closed by the system. */
async function closeOtherPairs(winner: PairRecord): Promise<void> {
  const rivals = (await runsheetPairIds(winner.plan.id, winner.pair.runsheet.id)).filter((id) => id !== winner.id);
  for (const other of await pairStates(winner.plan.id, rivals)) {
    if (!isOpenPair(other.current_state)) continue;
    await recordEvent(winner.plan.id, other.id, 'system_rejected', clock.nowIso(), {
      reason: 'assigned_to_other_driver',
    }).catch((error: unknown) => {
      if (closedAlready(error)) return;
      // The accept is recorded; its retry (same event) closes what is left. A 409 would say nothing was recorded.
      if ((error as Error).message === CONTENDED) {
        throw dependencyUnavailable(1, 'the accept is recorded but a rival offer kept changing; retry the same event');
      }
      throw error;
    });
  }
}

/** R1. */
export async function readPairRecord(caller: Caller, planId: string, pairId: string) {
  await visiblePlanning(caller, planId);
  const record = await readPair(planId, pairId);
  if (!record) throw notFound('pair record');
  return (await assembled(planId, [record]))[0]!;
}

/** R2. */
export async function listPairRecords(caller: Caller, planId: string, page: PageRequest) {
  await visiblePlanning(caller, planId);
  return queryPartitionsPage(
    planPartitions(planId),
    {
      TableName: mainTableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :pair)',
      ExpressionAttributeValues: { ':pair': 'PAIR#' },
    },
    page,
    (item) => pairFromItem(item) as unknown as PairRecord,
    (records) => assembled(planId, records),
  );
}

/**
 * X12: the caller's own pair records, open offers first (soonest to expire first), then, with `state=all`, the
 * others newest first. One Query a page on GSI2 (read through); each page's runsheets assembled per planning before
 * the page is cut to the answer budget.
 */
export async function listDriverOffers(caller: Caller, state: 'broadcasted' | 'all', page: PageRequest) {
  const found = await queryPage(
    {
      TableName: mainTableName(),
      IndexName: 'GSI2',
      KeyConditionExpression: state === 'all' ? 'GSI2PK = :pk' : 'GSI2PK = :pk AND begins_with(GSI2SK, :open)',
      ExpressionAttributeValues: {
        ':pk': `DRIVER#${caller.id}#OFFERS`,
        ...(state === 'all' ? {} : { ':open': '0#' }),
      },
      ScanIndexForward: true,
    },
    page,
    (item) => pairFromItem(item) as unknown as PairRecord,
    undefined,
    assembledByPlanning,
  );
  return {
    // A pair closed between the index read and the record's read is not an open offer any more.
    offers: found.items.filter((r) => state === 'all' || r.current_state === 'broadcasted'),
    meta: found.meta,
  };
}

/** Pair records of any plannings, assembled a planning at a time, in the order given. */
async function assembledByPlanning(records: PairRecord[]) {
  const byPlan = new Map<string, PairRecord[]>();
  for (const record of records) byPlan.set(record.plan.id, [...(byPlan.get(record.plan.id) ?? []), record]);
  const views = new Map<string, ReturnType<typeof toPairView>>();
  for (const [planId, ofPlan] of byPlan) {
    const shown = await assembled(planId, ofPlan);
    for (const [i, record] of ofPlan.entries()) views.set(`${planId}#${record.id}`, shown[i]!);
  }
  return records.map((record) => views.get(`${record.plan.id}#${record.id}`)!);
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
    recordEvent(planId, pairId, 'system_rejected', expiredTime, { reason: 'expired' })
      .then(() => {
        closed++;
        return true;
      })
      .catch(async (error: unknown) => {
        if (closedAlready(error)) {
          // (If that fails, the next sweep finds the entry again: the others are swept meanwhile.)
          if (ownEntry) await dropSweepEntry(planId, pairId).catch((drop: unknown) => (failed ??= drop));
          return true;
        }
        failed ??= error;
        return false;
      });
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

/** Drivers may act only on their own pairs; workers on any. */
export function assertActor(
  caller: Caller,
  allowedWorker: 'RunsheetBroadcastPlanWorker' | 'RunsheetBroadcastRecordWorker',
) {
  if (!hasRole(caller, allowedWorker, 'Driver', 'OrgDriver')) {
    throw forbidden(`your token has ${describeCaller(caller)}; this move needs ${allowedWorker}, Driver or OrgDriver`);
  }
}
