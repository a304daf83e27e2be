/**
 * Broadcast pair records (R1–R8): one item per runsheet-driver pair (`BPLAN#<plan> / PAIR#<pair>`) with its full
 * status history. Legality is judged against the current state in arrival order; `statuses[]` is kept in the order
 * the events happened; the same event twice is recorded once. Each write is conditional on the record's revision.
 * Accepting also claims the runsheet (`ASSIGN#<runsheet>`, condition: nobody has) in the same transaction, so of two
 * simultaneous accepts exactly one wins; the runsheet's other open pairs are then closed by the system.
 * A broadcasted pair carries its expiry in a sparse index (GSI3 `OFFERS`), which the expiry sweep reads.
 */

import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getUser } from '#shared/accounts/users';
import { type Caller, hasRole } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { cancelledIndexes, db, isConditionalFailure, mainTableName, transactWrite } from '#shared/db/client';
import { conflict, forbidden, invalidField, notFound } from '#shared/http/problems';
import { publish } from '#shared/notifications/realtime';
import { findPlanning, visiblePlanning } from '#shared/planning/plannings';
import type { PAIR_ACTIONS, PAIR_STATES } from '#shared/planning/schemas';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';

export type PairState = (typeof PAIR_STATES)[number];
export type PairAction = (typeof PAIR_ACTIONS)[number];

const MOVES: Record<Exclude<PairAction, 'created'>, { from: readonly PairState[] | 'any'; to: PairState }> = {
  broadcast: { from: ['created'], to: 'broadcasted' },
  accepted: { from: ['broadcasted'], to: 'accepted' },
  rejected: { from: ['broadcasted'], to: 'rejected' },
  system_rejected: { from: ['created', 'broadcasted'], to: 'rejected' },
  deleted: { from: 'any', to: 'deleted' },
};

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
}

const pairKey = (planId: string, pairId: string) => ({ PK: `BPLAN#${planId}`, SK: `PAIR#${pairId}` });
const assignKey = (planId: string, runsheetId: string) => ({ PK: `BPLAN#${planId}`, SK: `ASSIGN#${runsheetId}` });

/** The stored item of a record: its indexes follow its state. */
export function pairItem(record: PairRecord) {
  const offer =
    record.current_state === 'broadcasted'
      ? [...record.statuses].reverse().find((s) => s.action === 'broadcast')
      : undefined;
  return {
    ...pairKey(record.plan.id, record.id),
    GSI1PK: `BPLAN#${record.plan.id}#RS#${record.pair.runsheet.id}`,
    GSI1SK: record.id,
    ...(offer?.expired_time
      ? { GSI3PK: 'OFFERS', GSI3SK: `${offer.expired_time}#${record.plan.id}#${record.id}` }
      : {}),
    entity: 'pair_record',
    ...record,
  };
}

export const pairView = ({ rev: _rev, org_id: _org, offer_ttl_s: _ttl, ...record }: PairRecord) => record;

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
  if (!planning) throw invalidField('plan.id', 'names no planning');
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
  };
  if (!(await putNewPair(record))) {
    const existing = await readPair(input.plan.id, input.pair.id);
    const same = existing?.statuses.some(
      (s) => s.action === 'created' && s.happened_at_utc === toUtcIso(input.happened_at_utc),
    );
    if (same) return existing!;
    throw conflict('this pair was already created');
  }
  return record;
}

export async function readPair(planId: string, pairId: string): Promise<PairRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: pairKey(planId, pairId) }));
  return out.Item as PairRecord | undefined;
}

/** R4–R8. `caller` is checked when the action is a driver's own (the paired driver may accept or reject). */
export async function recordEvent(
  planId: string,
  pairId: string,
  action: Exclude<PairAction, 'created'>,
  happenedAt: string,
  options: { reason?: string | null | undefined; caller?: Caller } = {},
): Promise<PairRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const record = await readPair(planId, pairId);
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
      if (record.current_state === MOVES[action].to) await afterEvent(record, action);
      return record;
    }
    const move = MOVES[action];
    if (move.from === 'any' ? record.current_state === 'deleted' : !move.from.includes(record.current_state)) {
      throw conflict(`a pair cannot go from ${record.current_state} by ${action}`);
    }
    const expired =
      action === 'broadcast' ? new Date(Date.parse(happened) + record.offer_ttl_s * 1000).toISOString() : null;
    const next: PairRecord = {
      ...record,
      statuses: inHappenedOrder(record.statuses, entry(action, move.to, happened, options.reason ?? null, expired)),
      current_state: move.to,
      rev: record.rev + 1,
    };
    try {
      await transactWrite([
        {
          Put: {
            TableName: mainTableName(),
            Item: pairItem(next),
            ConditionExpression: 'rev = :rev',
            ExpressionAttributeValues: { ':rev': record.rev },
          },
        },
        ...(action === 'accepted'
          ? [
              {
                Put: {
                  TableName: mainTableName(),
                  Item: {
                    ...assignKey(planId, record.pair.runsheet.id),
                    entity: 'runsheet_assignment',
                    pair_id: pairId,
                    driver_id: record.pair.driver.id,
                    assigned_at: clock.nowIso(),
                  },
                  ConditionExpression: 'attribute_not_exists(PK)',
                },
              },
            ]
          : []),
      ]);
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      if (action === 'accepted' && cancelledIndexes(error).includes(1)) {
        throw conflict('another driver already accepted this runsheet', 'runsheet_already_assigned');
      }
      continue; // the record changed meanwhile: judge again against its new state
    }
    await afterEvent(next, action);
    return next;
  }
  throw conflict('the pair record kept changing; retry');
}

async function afterEvent(record: PairRecord, action: PairAction): Promise<void> {
  const channel = `planning.${record.plan.id}`;
  const data = {
    pair_id: record.id,
    runsheet_id: record.pair.runsheet.id,
    driver_id: record.pair.driver.id,
    current_state: record.current_state,
  };
  // A failure here is the request's (503): the change is recorded, and the retry of the same event (same action,
  // same happened_at_utc) comes back through recordEvent's "recorded already" path and sends these again. The
  // closing of rival offers is part of it, so an accept never leaves them open.
  const eventKey = `${record.id}:${action}`;
  if (action === 'accepted') {
    await closeOtherPairs(record);
    await publish(channel, 'pair.accepted', data);
    await publishPartnerEvent(record.org_id, 'pair.accepted', data, eventKey);
  } else if (action === 'rejected' || action === 'system_rejected') {
    await publish(channel, 'pair.rejected', { ...data, reason: record.statuses.at(-1)?.reason ?? null });
    await publishPartnerEvent(record.org_id, 'pair.rejected', data, eventKey);
  }
}

/** After an accept: every other open pair of the runsheet is closed by the system. */
async function closeOtherPairs(winner: PairRecord): Promise<void> {
  const out = await db().send(
    new QueryCommand({
      TableName: mainTableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :rs',
      ExpressionAttributeValues: { ':rs': `BPLAN#${winner.plan.id}#RS#${winner.pair.runsheet.id}` },
    }),
  );
  for (const item of out.Items ?? []) {
    const other = item as PairRecord;
    if (other.id === winner.id || !['created', 'broadcasted'].includes(other.current_state)) continue;
    await recordEvent(winner.plan.id, other.id, 'system_rejected', clock.nowIso(), {
      reason: 'assigned_to_other_driver',
    }).catch((error: unknown) => {
      if ((error as { status?: number }).status !== 409) throw error;
    });
  }
}

/** R1. */
export async function readPairRecord(caller: Caller, planId: string, pairId: string) {
  await visiblePlanning(caller, planId);
  const record = await readPair(planId, pairId);
  if (!record) throw notFound('pair record');
  return pairView(record);
}

/** R2. */
export async function listPairRecords(caller: Caller, planId: string) {
  await visiblePlanning(caller, planId);
  const records: ReturnType<typeof pairView>[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: mainTableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :pair)',
        ExpressionAttributeValues: { ':pk': `BPLAN#${planId}`, ':pair': 'PAIR#' },
        ExclusiveStartKey: cursor,
      }),
    );
    records.push(...(out.Items ?? []).map((item) => pairView(item as PairRecord)));
    cursor = out.LastEvaluatedKey;
  } while (cursor);
  return records;
}

/** The expiry sweep: every broadcasted pair past its expiry is closed by the system with reason `expired`. */
export async function expireOffers(): Promise<number> {
  const out = await db().send(
    new QueryCommand({
      TableName: mainTableName(),
      IndexName: 'GSI3',
      KeyConditionExpression: 'GSI3PK = :offers AND GSI3SK < :now',
      ExpressionAttributeValues: { ':offers': 'OFFERS', ':now': clock.nowIso() },
      Limit: 500,
    }),
  );
  let closed = 0;
  let failed: unknown;
  for (const item of out.Items ?? []) {
    const record = item as PairRecord;
    if (record.current_state !== 'broadcasted') continue;
    const offer = [...record.statuses].reverse().find((s) => s.action === 'broadcast');
    await recordEvent(record.plan.id, record.id, 'system_rejected', offer?.expired_time ?? clock.nowIso(), {
      reason: 'expired',
    })
      .then(() => {
        closed++;
      })
      .catch((error: unknown) => {
        if ((error as { status?: number }).status === 409) return;
        // The others are still closed; this one is retried by the next sweep if it is still open.
        failed ??= error;
      });
  }
  if (failed) throw failed;
  return closed;
}

/** Drivers may act only on their own pairs; workers on any. */
export function assertActor(
  caller: Caller,
  allowedWorker: 'RunsheetBroadcastPlanWorker' | 'RunsheetBroadcastRecordWorker',
) {
  if (!hasRole(caller, allowedWorker, 'Driver', 'OrgDriver')) throw forbidden();
}
