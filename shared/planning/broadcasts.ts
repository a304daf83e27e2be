/**
 * Broadcast pair records (R1–R8): one item per runsheet-driver pair (`BPLAN#<plan>#<n> / PAIR#<pair>`) with its full
 * status history. Legality is judged against the current state in arrival order; `statuses[]` is kept in the order
 * the events happened; the same event twice is recorded once. Each write is conditional on the record's revision.
 * Accepting also claims the runsheet (`ASSIGN#<runsheet>`, condition: nobody has) in the same transaction, so of two
 * simultaneous accepts exactly one wins; the runsheet's other open pairs are then closed by the system.
 * A runsheet's pairs are named by its offer group (`BPLAN#<plan>#<n> / RSPAIRS#<runsheet>`: its drivers offered, by
 * wave, and the few pairs listed by id, shared/planning/offer-groups.ts), which the accept reads to find the rivals.
 *
 * The record, its item and its reads: shared/planning/pair-records.ts; the planning job's wave 1: first-offers.ts;
 * the expiry sweep: offer-expiry.ts.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { describeCaller } from '#shared/auth/access';
import { type Caller, hasRole } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
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
import { conflict, dependencyUnavailable, forbidden, invalidAt, isDomainError, notFound } from '#shared/errors';
import { publishEvent } from '#shared/notifications/realtime';
import { addToGroup } from '#shared/planning/first-offers';
import { assignKey, driverRunsheetKeys, groupKey, liveRunsheetKeys, pairKey, winsKey } from '#shared/planning/keys';
import {
  driverAtCapacity,
  isOpenPair,
  PAIR_MOVES,
  type PairAction,
  type PairState,
  pairMove,
  pairRefusal,
  pairRunsheetTaken,
  runsheetRefusal,
} from '#shared/planning/lifecycle';
import { groupPairIds, type OfferListing } from '#shared/planning/offer-groups';
import {
  DECLINED_BY_DRIVER,
  offerNew,
  type PairRecord,
  pairEventKey,
  pairItem,
  putNewPair,
  readPair,
  type StatusEntry,
} from '#shared/planning/pair-records';
import { findPlanning } from '#shared/planning/planning-records';
import { JOB_DEFAULTS } from '#shared/planning/schemas';
import { waveDueKey, wavePlansPartition } from '#shared/planning/wave-plans';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';

/** The closes after which the runsheet may need its next wave (not those that mean somebody has it, or nobody wants it). */
const NO_WAVE_AFTER = new Set(['assigned_to_other_driver', 'runsheet_cancelled']);

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

/** Drivers may act only on their own pairs; workers on any. */
export function assertActor(
  caller: Caller,
  allowedWorker: 'RunsheetBroadcastPlanWorker' | 'RunsheetBroadcastRecordWorker',
) {
  if (!hasRole(caller, allowedWorker, 'Driver', 'OrgDriver')) {
    throw forbidden(`your token has ${describeCaller(caller)}; this move needs ${allowedWorker}, Driver or OrgDriver`);
  }
}
