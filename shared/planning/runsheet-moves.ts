/**
 * The dispatcher's moves on a runsheet (X16–X18) and its driver's task events (X20) decided as data (issue 56): from
 * what was read (the runsheet's status, its claim, its offer group, its pairs), which move to make, its writes (with
 * their conditions, shared/planning/writes.ts), its refusal (shared/planning/lifecycle.ts's words) and what it
 * announces (shared/planning/announcements.ts). The shells that read, write and publish: dispatch.ts (X16–X18),
 * execution.ts (X20); a pair's own moves (X16's assignment, X19's give-back, the closes) are pair-moves.ts's.
 *
 * Pure: no I/O, no clock (each ask carries its time).
 */
import type { DomainError } from '#shared/errors';
import { type Announcement, frame, toPartners } from '#shared/planning/announcements';
import type { Assignment, DispatchGroup } from '#shared/planning/dispatch-records';
import type { UnassignedReason } from '#shared/planning/eligibility';
import { assignKey, groupKey, winsKey } from '#shared/planning/keys';
import {
  askRunsheet,
  type PairState,
  pairMove,
  type RunsheetFacts,
  type RunsheetMove,
  runsheetRefusal,
  type TaskEventType,
} from '#shared/planning/lifecycle';
import { offeredEntry } from '#shared/planning/offer-groups';
import { waveDueKey, wavePlansPartition } from '#shared/planning/wave-plans';
import type { Write } from '#shared/planning/writes';

/** Asks lifecycle.ts whether the move is legal for the runsheet as read: `move`, `again` (a retry) or refused. */
export function judgeRunsheet(
  move: RunsheetMove,
  runsheet: RunsheetFacts,
  driverId?: string,
): { kind: 'move' } | { kind: 'again' } | { kind: 'refused'; error: DomainError } {
  try {
    return askRunsheet(move, runsheet, driverId) === 'move' ? { kind: 'move' } : { kind: 'again' };
  } catch (error) {
    return { kind: 'refused', error: error as DomainError };
  }
}

// ----- X16: the dispatcher gives the runsheet to a driver -----

/** The driver's pair that X16 moves to `assigned`: their open offer of the runsheet, if they have one. */
export const pairToAssign = <P extends { id: string; current_state: PairState; pair: { driver: { id: string } } }>(
  pairs: readonly P[],
  driverId: string,
) => pairs.find((p) => p.pair.driver.id === driverId && pairMove(p.current_state, 'assigned'));

/** A new pair of the driver listed on the runsheet's offer group by id (an assignment's pair names no wave). */
export const listNewPair = (planId: string, runsheetId: string, pairId: string, driverId: string): Write => ({
  Update: {
    Key: groupKey(planId, runsheetId),
    UpdateExpression: 'SET entity = :entity ADD pair_ids :ids, offered :drivers',
    ExpressionAttributeValues: {
      ':entity': 'runsheet_offers',
      ':ids': new Set([pairId]),
      ':drivers': new Set([offeredEntry(0, driverId)]),
    },
  },
});

// ----- X17: one more wave now -----

/**
 * X17's ask for a wave: the next wave with the call's settings, allowed past `max_waves`, the group due now in its
 * planning's wave list (or the registry, when it is in none), on condition nothing moved it since it was read.
 */
export function reofferWrite(
  ask: { planId: string; orgId: string; runsheetId: string; now: string },
  group: DispatchGroup,
  settings: { max_candidates?: number | undefined; offer_ttl_s?: number | undefined },
): Write {
  const wave = group.wave ?? 1;
  return {
    Update: {
      Key: groupKey(ask.planId, ask.runsheetId),
      // A group out of every list (unassigned) goes into the registry: its planning is registered (wave-plans.ts).
      UpdateExpression:
        'SET reoffer = :reoffer, waves_allowed = :allowed, GSI3PK = if_not_exists(GSI3PK, :waves), GSI3SK = :due ADD gen :one',
      ConditionExpression: 'wave = :wave AND (attribute_not_exists(gen) OR gen = :gen)',
      ExpressionAttributeValues: {
        ':reoffer': {
          wave: wave + 1,
          ...(settings.max_candidates ? { max_candidates: settings.max_candidates } : {}),
          ...(settings.offer_ttl_s ? { offer_ttl_s: settings.offer_ttl_s } : {}),
        },
        ':allowed': Math.max(group.waves_allowed ?? wave, wave + 1),
        ':waves': wavePlansPartition(ask.orgId),
        ':due': waveDueKey(ask.now, ask.planId, ask.runsheetId),
        ':one': 1,
        ':wave': wave,
        ':gen': group.gen ?? 0,
      },
    },
  };
}

// ----- X18: the planner takes the runsheet out of dispatch -----

export interface CancelAsk {
  planId: string;
  runsheetId: string;
  reason: string;
  by: string;
  at: string;
}

/**
 * X18's mark: the group is marked cancelled, once; while the runsheet is assigned, in one transaction on condition
 * its claim has not started (its driver's first task event may land between the status read and the mark: the event,
 * for its part, holds only while the runsheet is not cancelled, execution.ts).
 */
export function decideCancel(
  runsheet: RunsheetFacts,
  ask: CancelAsk,
): { kind: 'again' } | { kind: 'refused'; error: DomainError } | { kind: 'write'; writes: Write[] } {
  // (A runsheet under way, contract 4.8, is its driver's: `in_progress` and `completed` refuse.)
  const judged = judgeRunsheet('cancel', runsheet);
  if (judged.kind !== 'move') return judged;
  const mark: Write = {
    Update: {
      Key: groupKey(ask.planId, ask.runsheetId),
      UpdateExpression: 'SET entity = :entity, cancelled = :cancelled REMOVE GSI3PK, GSI3SK ADD gen :one',
      ConditionExpression: 'attribute_not_exists(cancelled)',
      ExpressionAttributeValues: {
        ':entity': 'runsheet_offers',
        ':cancelled': { at: ask.at, reason: ask.reason, by: ask.by },
        ':one': 1,
      },
    },
  };
  if (runsheet.status !== 'assigned') return { kind: 'write', writes: [mark] };
  const unstarted: Write = {
    ConditionCheck: {
      Key: assignKey(ask.planId, ask.runsheetId),
      ConditionExpression: 'attribute_not_exists(started_at)',
    },
  };
  return { kind: 'write', writes: [mark, unstarted] };
}

/** A mark that lost: to the driver's first event (refused: under way), or to another cancel (it goes on as the first). */
export const cancelLost = (runsheet: RunsheetFacts, lost: readonly number[]): DomainError | undefined =>
  lost.includes(1) ? runsheetRefusal('cancel', { ...runsheet, status: 'in_progress' }) : undefined;

const cancelKey = (runsheetId: string) => `${runsheetId}:cancelled`;

/**
 * The driver who held the cancelled runsheet gets their place back (the count, on condition it is above zero: a
 * failure of that condition changes nothing) and loses the claim, and is told.
 */
export function releaseClaim(ask: CancelAsk, claim: Assignment) {
  return {
    count: {
      Update: {
        Key: winsKey(ask.planId, claim.driver_id),
        UpdateExpression: 'ADD wins :minus',
        ConditionExpression: 'wins > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
      },
    } satisfies Write,
    claim: { Delete: { Key: assignKey(ask.planId, ask.runsheetId) } } satisfies Write,
    told: [
      frame(`user.${claim.driver_id}`, 'runsheet.cancelled', {
        key: cancelKey(ask.runsheetId),
        data: { planning_id: ask.planId, runsheet_id: ask.runsheetId, pair_id: claim.pair_id, reason: ask.reason },
      }),
    ],
  };
}

/** X18's last word, once the runsheet's open offers are closed: on `planning.<id>` and to partners. */
export function cancelAnnouncements(ask: CancelAsk, orgId: string): Announcement[] {
  const data = { planning_id: ask.planId, runsheet_id: ask.runsheetId, reason: ask.reason };
  const key = cancelKey(ask.runsheetId);
  return [
    frame(`planning.${ask.planId}`, 'runsheet.cancelled', { key, data }),
    toPartners(orgId, 'runsheet.cancelled', data, key),
  ];
}

// ----- the wave worker: a runsheet nobody is left to take -----

/** One event per unassignment (X17 may find nobody left and unassign the runsheet again at the same wave). */
export function unassignAnnouncements(
  ask: { planId: string; orgId: string; runsheetId: string; wave: number | undefined; gen: number },
  reason: UnassignedReason,
): Announcement[] {
  const key = `${ask.runsheetId}:unassigned:${ask.wave}:${ask.gen}`;
  const data = { planning_id: ask.planId, runsheet_id: ask.runsheetId, unassigned_reason: reason };
  return [
    frame(`planning.${ask.planId}`, 'runsheet.unassigned', { key, data }),
    toPartners(ask.orgId, 'runsheet.unassigned', data, key),
  ];
}

// ----- X20: a task's event -----

/** What X20 tells of a recorded event: the event, and `runsheet.completed` once every task is delivered or failed. */
export function taskAnnouncements(input: {
  planId: string;
  orgId: string;
  runsheetId: string;
  task: { id: string; task_ref?: unknown };
  driver: { id: string; name: string };
  type: TaskEventType;
  entry: {
    status: string;
    happened_at_utc: string;
    latitude?: number;
    longitude?: number;
    failure_reason?: string;
    note?: string;
    recipient_name?: string;
    proof_ids?: string[];
  };
  claim: Assignment & { tasks_failed?: number };
}): Announcement[] {
  const { planId, orgId, runsheetId, task, driver, type, entry, claim } = input;
  // Keys name the event itself, so a repeat carries the same frame id and `webhook-id`.
  const key = `${runsheetId}:${task.id}:${type}:${entry.happened_at_utc}`;
  const data = {
    planning_id: planId,
    runsheet_id: runsheetId,
    task_id: task.id,
    ...(task.task_ref ? { task_ref: String(task.task_ref) } : {}),
    driver,
    type,
    status: entry.status,
    happened_at_utc: entry.happened_at_utc,
    latitude: entry.latitude ?? null,
    longitude: entry.longitude ?? null,
    failure_reason: entry.failure_reason ?? null,
    ...(entry.note ? { note: entry.note } : {}),
    ...(entry.recipient_name ? { recipient_name: entry.recipient_name } : {}),
    proof_ids: entry.proof_ids ?? [],
  };
  const event = `task.${type}` as const;
  const told: Announcement[] = [
    { to: 'channel', channel: `planning.${planId}`, name: event, event: { key, data } },
    toPartners(orgId, event, data, key),
  ];
  if (!claim.completed_at) return told;
  const done = Number(claim.tasks_done ?? 0);
  const failed = Number(claim.tasks_failed ?? 0);
  const completedKey = `${runsheetId}:completed:${claim.pair_id}`;
  const completed = {
    planning_id: planId,
    runsheet_id: runsheetId,
    driver,
    completed_at: claim.completed_at,
    tasks_total: Number(claim.tasks_total ?? done),
    tasks_delivered: done - failed,
    tasks_failed: failed,
  };
  return [
    ...told,
    frame(`planning.${planId}`, 'runsheet.completed', { key: completedKey, data: completed }),
    toPartners(orgId, 'runsheet.completed', completed, completedKey),
  ];
}
