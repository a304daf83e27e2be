/**
 * A pair's moves R4–R8 (and X16's assignment, X19's give-back, the waves' and sweeps' closes) decided (issue 56):
 * `decidePairMove` takes what was read (the pair record, the planning's runsheet limit, the runsheet's claim, how the
 * last write went) and the move asked, and answers what to do next as data: read one more fact, write these items
 * (one transaction's, with their conditions), or the move is done (the record and what it announces), or refused
 * (the 409 or 404 in words, from shared/planning/lifecycle.ts). The shell that reads, writes and publishes is
 * shared/planning/broadcasts.ts `recordEvent`; the publisher, shared/planning/announcements.ts.
 *
 * Pure: no I/O, no clock (the ask carries `now`). Its writes name no table (shared/planning/writes.ts: the shell names it).
 */
import { conflict, type DomainError, isDomainError, notFound } from '#shared/errors';
import { type Announcement, frame, toPartners } from '#shared/planning/announcements';
import { assignKey, driverRunsheetKeys, liveRunsheetKeys, winsKey } from '#shared/planning/keys';
import {
  driverAtCapacity,
  PAIR_MOVES,
  type PairAction,
  type PairState,
  pairMove,
  pairRefusal,
  pairRunsheetTaken,
  runsheetRefusal,
} from '#shared/planning/lifecycle';
import { DECLINED_BY_DRIVER, offerNew, type PairRecord, pairEventKey, pairItem } from '#shared/planning/pair-records';
import type { Write } from '#shared/planning/writes';

export type PairMoveAction = Exclude<PairAction, 'created'>;

/** The move asked of a pair. */
export interface PairAsk {
  action: PairMoveAction;
  /** When it happened, in UTC (`toUtcIso`). */
  happened: string;
  reason: string | null;
  /** The caller is a driver (Driver, OrgDriver): only their own pair is theirs to move, and refusals say "you". */
  driverId?: string | undefined;
  /** The wave worker's own closes: it judges the runsheet right after, so it is not marked due for a look. */
  judgedNow: boolean;
  /** The server's clock as the move is judged (`saved_at_utc`, the claim's `assigned_at`). */
  now: string;
}

/** The runsheet's claim (`ASSIGN#`), as a refused accept or give-back reads it; `null`: nobody holds it. */
export interface ClaimFacts {
  pair_id?: unknown;
  assigned_at?: unknown;
  started_at?: unknown;
}

/** What was read (and how the last write went) for one move of one pair. */
export interface PairReading {
  record: PairRecord | undefined;
  /** The planning's `max_runsheets_per_driver`: read for a move that claims the runsheet, once it is legal. */
  limit?: number;
  /** The runsheet's claim, read consistently when a refusal needs it. */
  claim?: ClaimFacts | null;
  /** The items (by index) whose conditions failed, when the last write lost. */
  lost?: number[];
  /** The record as the last write committed it. */
  written?: PairRecord;
  /** Writes tried so far (a record that keeps changing is given up after five). */
  tries: number;
}

export type PairDecision =
  /** Read this fact (`record`: again, consistently, after a lost write) and ask again. */
  | { kind: 'read'; need: 'record' | 'limit' | 'claim' }
  /** Write these items (the pair's put first; one item alone is a conditional put, more a transaction). */
  | { kind: 'write'; record: PairRecord; writes: Write[] }
  /** The move is recorded (now, or already by this very event's earlier try): tell these, answer the record. */
  | { kind: 'done'; record: PairRecord; announcements: Announcement[] }
  | { kind: 'refused'; error: DomainError };

/** The 409 of a move whose record kept changing under it (a system close that meets it is retried, not dropped). */
export const CONTENDED = 'the pair record kept changing; retry';
const TRIES = 5;

/** The closes after which the runsheet may need its next wave (not those that mean somebody has it, or nobody wants it). */
const NO_WAVE_AFTER = new Set(['assigned_to_other_driver', 'runsheet_cancelled']);

const claims = (action: PairMoveAction) => action === 'accepted' || action === 'assigned';

/** What to do next for `ask`, given what was read. */
export function decidePairMove(read: PairReading, ask: PairAsk): PairDecision {
  const { record } = read;
  if (!record || (ask.driverId !== undefined && ask.driverId !== record.pair.driver.id)) {
    return { kind: 'refused', error: notFound('pair record') };
  }
  if (read.written) return done(read.written, ask);
  if (read.lost) return afterLostWrite(read, record, ask);
  if (record.statuses.some((s) => s.action === ask.action && s.happened_at_utc === ask.happened)) {
    // Recorded already: by this very event's earlier try, whose effects may have failed after the commit (the
    // client got a 503 and retries). The effects are told again; each is safe to repeat.
    if (record.current_state === PAIR_MOVES[ask.action].to) return done(record, ask);
    return { kind: 'done', record, announcements: [] };
  }
  const to = pairMove(record.current_state, ask.action);
  if (!to) {
    // An accept of a runsheet that another driver holds is `runsheet_already_assigned` whatever became of this pair.
    if (claims(ask.action) && read.claim === undefined) return { kind: 'read', need: 'claim' };
    return { kind: 'refused', error: refusal(record, ask.action, read.claim, ask.driverId !== undefined) };
  }
  if (claims(ask.action) && read.limit === undefined) return { kind: 'read', need: 'limit' };
  const next = moved(record, ask, to);
  const put: Write = {
    Put: { Item: pairItem(next), ConditionExpression: 'rev = :rev', ExpressionAttributeValues: { ':rev': record.rev } },
  };
  // An accept (or a dispatcher's assignment) also claims the runsheet and counts it against the driver's limit, a
  // withdrawal gives both back: transactions. Any other move writes the pair alone.
  const beside = claims(ask.action)
    ? claimWrites(record, ask, read.limit!)
    : ask.action === 'withdrawn'
      ? releaseWrites(record)
      : [];
  return { kind: 'write', record: next, writes: [put, ...beside] };
}

/** After a write that lost: the claim or the driver's count refused it, or the record changed (judge it again). */
function afterLostWrite(read: PairReading, record: PairRecord, ask: PairAsk): PairDecision {
  const lost = read.lost!;
  if (claims(ask.action) && lost.includes(1)) {
    // Somebody holds the runsheet (said of the driver as a dispatcher would: the claim names who).
    if (read.claim === undefined) return { kind: 'read', need: 'claim' };
    return { kind: 'refused', error: refusal(record, ask.action, read.claim, false) };
  }
  if (claims(ask.action) && lost.includes(2)) {
    if (read.limit === undefined) return { kind: 'read', need: 'limit' };
    return { kind: 'refused', error: driverAtCapacity(read.limit, ask.driverId !== undefined) };
  }
  if (ask.action === 'withdrawn' && lost.some((i) => i > 0)) {
    if (read.claim === undefined) return { kind: 'read', need: 'claim' };
    const started = read.claim?.pair_id === record.id && read.claim.started_at;
    return {
      kind: 'refused',
      error: runsheetRefusal('give_back', {
        id: record.pair.runsheet.id,
        // Under way (its driver reported a task), or no longer this pair's (cancelled or reassigned).
        status: started ? 'in_progress' : 'cancelled',
        ...(started ? { started_at: String(read.claim!.started_at) } : {}),
      }),
    };
  }
  // The record changed meanwhile: judge again against its new state.
  if (read.tries >= TRIES) return { kind: 'refused', error: conflict(CONTENDED) };
  return { kind: 'read', need: 'record' };
}

/** The 409 of a move the record's state (or, for a win, the runsheet's claim) does not allow. */
function refusal(record: PairRecord, action: PairMoveAction, claim: ClaimFacts | null | undefined, own: boolean) {
  if (claims(action) && claim && claim.pair_id !== record.id) return pairRunsheetTaken(record, claim.assigned_at);
  return pairRefusal(record, action, own);
}

/** The record after the move: its entry where it happened (after any of the same instant: ties by arrival). */
function moved(record: PairRecord, ask: PairAsk, to: PairState): PairRecord {
  const expired =
    ask.action === 'broadcast' ? new Date(Date.parse(ask.happened) + record.offer_ttl_s * 1000).toISOString() : null;
  const entry = {
    current_state: to,
    action: ask.action,
    reason: ask.reason,
    expired_time: expired,
    happened_at_utc: ask.happened,
    saved_at_utc: ask.now,
  };
  const index = record.statuses.findIndex((s) => s.happened_at_utc > entry.happened_at_utc);
  const statuses =
    index === -1
      ? [...record.statuses, entry]
      : [...record.statuses.slice(0, index), entry, ...record.statuses.slice(index)];
  return { ...record, statuses, current_state: to, rev: record.rev + 1 };
}

/**
 * What a win writes beside its pair: the runsheet's claim (nobody has it) and the driver's count of the planning's
 * runsheets (below the limit). Of two simultaneous accepts of one runsheet, or of one driver at their last place,
 * exactly one commits.
 */
function claimWrites(record: PairRecord, ask: PairAsk, limit: number): Write[] {
  const planId = record.plan.id;
  return [
    {
      Put: {
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
          assigned_at: ask.now,
          happened_at_utc: ask.happened,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Update: {
        Key: winsKey(planId, record.pair.driver.id),
        UpdateExpression: 'SET entity = :entity ADD wins :one',
        ConditionExpression: 'attribute_not_exists(wins) OR wins < :limit',
        ExpressionAttributeValues: { ':entity': 'driver_wins', ':one': 1, ':limit': limit },
      },
    },
  ];
}

/** A withdrawal's other writes: the claim goes (if it is still this pair's) and the driver's count comes down. */
function releaseWrites(record: PairRecord): Write[] {
  const planId = record.plan.id;
  return [
    {
      Delete: {
        Key: assignKey(planId, record.pair.runsheet.id),
        // A runsheet under way (contract 4.8: its driver reported a task) is no longer given back.
        ConditionExpression: 'pair_id = :pair AND attribute_not_exists(started_at)',
        ExpressionAttributeValues: { ':pair': record.id },
      },
    },
    {
      Update: {
        Key: winsKey(planId, record.pair.driver.id),
        UpdateExpression: 'ADD wins :minus',
        ConditionExpression: 'wins > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
      },
    },
  ];
}

const done = (record: PairRecord, ask: PairAsk): PairDecision => ({
  kind: 'done',
  record,
  announcements: pairAnnouncements(record, ask.action, ask.judgedNow),
});

/**
 * What a pair's move tells, in order (contract 4.7). Every closure says why: the system's moves carry their reason; a
 * driver's own decline, which R7 gives none, is `declined_by_driver`, so a program tells it from the system's closures
 * by the reason alone.
 */
export function pairAnnouncements(record: PairRecord, action: PairMoveAction, judgedNow = false): Announcement[] {
  const channel = `planning.${record.plan.id}`;
  const driverChannel = `user.${record.pair.driver.id}`;
  const runsheetId = record.pair.runsheet.id;
  const data = { pair_id: record.id, runsheet_id: runsheetId, driver_id: record.pair.driver.id };
  const state = { ...data, current_state: record.current_state };
  const last = record.statuses.findLast((s) => s.action === action);
  const key = pairEventKey(record.id, action);
  const reason = last?.reason ?? (action === 'rejected' ? DECLINED_BY_DRIVER : null);
  const told: Announcement[] = [];
  // A close that may leave the runsheet without an open offer asks the wave worker to look at it now (contract 4.7).
  // First: a failure after it still leaves the runsheet looked at. Only the planning job's runsheets have waves.
  const closes = action === 'rejected' || action === 'system_rejected' || action === 'withdrawn';
  if (closes && record.plan_swept && !judgedNow && !NO_WAVE_AFTER.has(reason ?? '')) {
    told.push({
      to: 'waves',
      planId: record.plan.id,
      orgId: record.org_id,
      runsheetId,
      extraWave: action === 'withdrawn',
    });
  }
  const pairFrame = { pair_id: record.id, planning_id: record.plan.id, runsheet_id: runsheetId };
  switch (action) {
    case 'broadcast':
      told.push(frame(driverChannel, 'offer.new', offerNew(record, last?.expired_time ?? null)));
      break;
    case 'accepted':
    case 'assigned': {
      // The win is told before the closes it causes; the driver hears it is theirs once they are done.
      const event = action === 'accepted' ? 'pair.accepted' : 'pair.assigned';
      told.push(
        frame(channel, event, { key, data: state }),
        toPartners(record.org_id, event, state, key),
        { to: 'closes', of: 'rivals', winner: record },
        { to: 'closes', of: 'capacity', winner: record },
        frame(driverChannel, 'runsheet.assigned', {
          key,
          data: pairFrame,
        }),
      );
      break;
    }
    case 'withdrawn':
      told.push(
        frame(channel, 'pair.withdrawn', { key, data: { ...state, reason } }),
        toPartners(record.org_id, 'pair.withdrawn', { ...state, reason }, key),
      );
      break;
    case 'rejected':
    case 'system_rejected':
      told.push(frame(channel, 'pair.rejected', { key, data: { ...state, reason } }));
      // The driver is told when the system closed their offer (expired, taken by another driver, ...), not of their
      // own rejection.
      if (action === 'system_rejected') {
        told.push(frame(driverChannel, 'offer.closed', { key, data: { ...pairFrame, reason } }));
      }
      told.push(toPartners(record.org_id, 'pair.rejected', { ...state, reason }, key));
      break;
    case 'deleted':
      break;
  }
  return told;
}

/**
 * What a system close (`system_rejected`) that met a conflict does with it, by what its caller asked for a close
 * that kept losing its write (`contended`): `skip` (the caller looks at the runsheet again anyway: the waves, X18),
 * `throw` (the error as it is: the close's retry or the next sweep closes it), `unavailable` (a win's rival closes:
 * the win is recorded, so a 409 would say wrongly that nothing was; a 503 asks for its retry).
 */
export type ContendedClose = 'skip' | 'throw' | 'unavailable';

/**
 * How a system close's failure ends: `none` (the pair was answered or closed already, or contended and skipped:
 * nothing closed, nothing to tell), `throw` (rethrown as it is) or `unavailable` (a 503 instead). Not a conflict:
 * always thrown.
 */
export function closeFailure(error: unknown, contended: ContendedClose): 'none' | 'throw' | 'unavailable' {
  if (!isDomainError(error, 'conflict')) return 'throw';
  if (error.message !== CONTENDED || contended === 'skip') return 'none';
  return contended;
}
