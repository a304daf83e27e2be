/**
 * Broadcast pair records' moves (R3–R8): one item per runsheet-driver pair (`BPLAN#<plan>#<n> / PAIR#<pair>`) with
 * its full status history. R3 writes a pair; every other move (R4–R8, X16's assignment, X19's give-back, the waves'
 * and sweeps' closes) goes through `recordEvent`, the shell of read → decide → write → announce: it reads the record,
 * asks shared/planning/pair-moves.ts `decidePairMove` (legality from lifecycle.ts, the claim and the driver's count
 * as conditions of one transaction, the refusals, what the move announces), reads what the decision still needs,
 * writes what it says, and hands the announcements to shared/planning/announcements.ts `publish`. The closes a win
 * causes are moves of their own, here: the runsheet's other open offers (named by its offer group, `RSPAIRS#`,
 * shared/planning/offer-groups.ts) and, when the win fills the driver's last place, the driver's other offers. Every
 * system close (these, the waves', the expiry sweep's, X18's) goes through one helper, `closeOffer`.
 *
 * The record, its item and its reads: shared/planning/pair-records.ts; the planning job's wave 1: first-offers.ts;
 * the expiry sweep: offer-expiry.ts.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { describeCaller } from '#shared/auth/access';
import { type Caller, hasRole } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { cancelledIndexes, db, getAll, isConditionalFailure, mainTableName, queryAll } from '#shared/db/client';
import { conflict, dependencyUnavailable, forbidden, invalidAt } from '#shared/errors';
import { type Closes, publish } from '#shared/planning/announcements';
import { addToGroup } from '#shared/planning/first-offers';
import { assignKey, groupKey, pairKey, winsKey } from '#shared/planning/keys';
import { isOpenPair, type PairState } from '#shared/planning/lifecycle';
import { groupPairIds, type OfferListing } from '#shared/planning/offer-groups';
import {
  type ClaimFacts,
  type ContendedClose,
  closeFailure,
  decidePairMove,
  type PairAsk,
  type PairMoveAction,
  type PairReading,
} from '#shared/planning/pair-moves';
import { type PairRecord, putNewPair, readPair } from '#shared/planning/pair-records';
import { findPlanning } from '#shared/planning/planning-records';
import { JOB_DEFAULTS } from '#shared/planning/schemas';
import { type Write, writeAll } from '#shared/planning/writes';

export { checkWaveSoon } from '#shared/planning/wave-plans';

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
    statuses: [
      {
        current_state: 'created',
        action: 'created',
        reason: null,
        expired_time: null,
        happened_at_utc: toUtcIso(input.happened_at_utc),
        saved_at_utc: clock.nowIso(),
      },
    ],
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

/**
 * The system closes an open offer (`system_rejected`, with `reason`): every close goes through here (the waves', the
 * expiry sweep's, X18's, a win's). Answers the record closed, or undefined when the pair was answered or closed
 * already (or kept changing, when `contended` is `skip`); pair-moves.ts `closeFailure` says how each failure ends.
 */
export async function closeOffer(
  planId: string,
  pairId: string,
  reason: string,
  options: { at?: string; judgedNow?: boolean; contended: ContendedClose },
): Promise<PairRecord | undefined> {
  try {
    return await recordEvent(planId, pairId, 'system_rejected', options.at ?? clock.nowIso(), {
      reason,
      ...(options.judgedNow ? { judgedNow: true } : {}),
    });
  } catch (error) {
    const outcome = closeFailure(error, options.contended);
    if (outcome === 'none') return undefined;
    // The accept is recorded; its retry (same event) closes what is left. A 409 would say nothing was recorded.
    if (outcome === 'unavailable')
      throw dependencyUnavailable(1, 'the accept is recorded but a rival offer kept changing; retry the same event');
    throw error;
  }
}

/**
 * R4–R8, X16's assignment, X19's give-back and every system close: read → decide → write → announce. What was read
 * goes to `decidePairMove` (pair-moves.ts), which answers the next fact to read, the items to write, the refusal, or
 * the record and what it announces, which `publish` (announcements.ts) tells. `caller` is checked when the move is a
 * driver's own (the paired driver may accept, reject, give back).
 */
export async function recordEvent(
  planId: string,
  pairId: string,
  action: PairMoveAction,
  happenedAt: string,
  options: {
    reason?: string | null | undefined;
    caller?: Caller;
    /** The wave worker's own closes: it judges the runsheet right after, so it is not marked due for a look. */
    judgedNow?: boolean;
  } = {},
): Promise<PairRecord> {
  const ask: PairAsk = {
    action,
    happened: toUtcIso(happenedAt),
    reason: options.reason ?? null,
    driverId: options.caller && hasRole(options.caller, 'Driver', 'OrgDriver') ? options.caller.id : undefined,
    judgedNow: options.judgedNow ?? false,
    now: clock.nowIso(),
  };
  let read: PairReading = { record: await readPair(planId, pairId), tries: 0 };
  for (;;) {
    const decision = decidePairMove(read, ask);
    if (decision.kind === 'read') read = await readMore(read, decision.need, planId, pairId);
    else if (decision.kind === 'write') read = await write(read, decision.record, decision.writes);
    else if (decision.kind === 'refused') throw decision.error;
    else {
      await publish(decision.announcements, closesOf);
      return decision.record;
    }
  }
}

/** The fact a decision needs: the record again (consistently: a lost race reads what won it), the limit, the claim. */
async function readMore(read: PairReading, need: 'record' | 'limit' | 'claim', planId: string, pairId: string) {
  if (need === 'record') return { record: await readPair(planId, pairId, true), tries: read.tries };
  if (need === 'limit') return { ...read, limit: await runsheetLimit(planId) };
  const out = await db().send(
    new GetCommand({
      TableName: mainTableName(),
      Key: assignKey(planId, read.record!.pair.runsheet.id),
      ConsistentRead: true,
    }),
  );
  return { ...read, claim: (out.Item as ClaimFacts | undefined) ?? null };
}

/**
 * Writes a decision's items; a write that lost says which conditions failed (and forgets the limit and claim it was
 * judged on: a refusal reads them as they are now).
 */
async function write(read: PairReading, record: PairRecord, writes: Write[]): Promise<PairReading> {
  try {
    await writeAll(writes);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    const lost = writes.length === 1 ? [0] : cancelledIndexes(error);
    return { record: read.record, lost, tries: read.tries + 1 };
  }
  return { ...read, written: record, tries: read.tries + 1 };
}

/** The closes a win causes (its `closes` announcements), done as moves of their own. */
const closesOf: Closes = (of, winner) => (of === 'rivals' ? closeOtherPairs(winner) : closeAtCapacity(winner));

/** The planning's `max_runsheets_per_driver` (its job's, or the default when it has none). */
async function runsheetLimit(planId: string): Promise<number> {
  const planning = await findPlanning(planId);
  return planning?.job?.max_runsheets_per_driver ?? JOB_DEFAULTS.max_runsheets_per_driver;
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
    await closeOffer(planId, pairId, 'driver_at_capacity', { contended: 'throw' });
  }
}

/** After an accept: every other open pair of the runsheet is closed by the system. */
async function closeOtherPairs(winner: PairRecord): Promise<void> {
  const rivals = (await runsheetPairIds(winner.plan.id, winner.pair.runsheet.id)).filter((id) => id !== winner.id);
  for (const other of await pairStates(winner.plan.id, rivals)) {
    if (!isOpenPair(other.current_state)) continue;
    await closeOffer(winner.plan.id, other.id, 'assigned_to_other_driver', { contended: 'unavailable' });
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
