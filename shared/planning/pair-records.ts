/**
 * A broadcast pair record (R1–R8): one item per runsheet-driver pair (`BPLAN#<plan>#<n> / PAIR#<pair>`) with its full
 * status history, kept in the order the events happened. Here: the record and its stored item (its index entries
 * follow its state: X12's `DRIVER#<id>#OFFERS`, R5's entry in the sweep index), its view, its first write
 * (`putNewPair`), its reads (R1, R2, X12), and the shapes of the events its moves announce (`pairEventKey`,
 * `offerNew`). The planning job's pairs do not copy their runsheet (`runsheet_ref`: R1/R2 assemble it from the
 * planning's runsheet item). The moves are decided by shared/planning/pair-moves.ts and made by broadcasts.ts.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#shared/auth/caller';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { type PageRequest, queryPage, queryPartitionsPage } from '#shared/db/paging';
import { orgSweepPartition } from '#shared/db/shards';
import { notFound } from '#shared/errors';
import { pairKey, planPartitions } from '#shared/planning/keys';
import { type PairAction, type PairState, pairStateAfter } from '#shared/planning/lifecycle';
import { planningRunsheets } from '#shared/planning/offered-runsheets';
import { visiblePlanning } from '#shared/planning/planning-records';

export type { PairAction, PairState } from '#shared/planning/lifecycle';

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

export async function readPair(planId: string, pairId: string, consistent = false): Promise<PairRecord | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: pairKey(planId, pairId), ConsistentRead: consistent }),
  );
  return out.Item ? (pairFromItem(out.Item) as unknown as PairRecord) : undefined;
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

/** The expiry sweep's work lists: plans' offer watches and R5's pairs (`OFFERS#<org>`, one an organisation). */
export const OFFERS = 'OFFERS';

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
