/**
 * The dispatcher's moves on a runsheet (X16–X18) and X20's announcements decided as data
 * (shared/planning/runsheet-moves.ts, issue 56): every runsheet status against each move, X18's mark and the
 * condition that keeps it off a runsheet under way, the cancel that lost to the driver's first event, X17's ask for a
 * wave, the pair X16 moves, and what X18 and X20 tell in order. The emulator tests (dispatch-actions, dispatch-day,
 * execution, capacity) prove the same through DynamoDB.
 */
import { describe, expect, it } from 'vitest';
import type { DomainError } from '../../shared/errors.ts';
import { assignKey, groupKey, winsKey } from '../../shared/planning/keys.ts';
import type { RunsheetFacts, RunsheetMove } from '../../shared/planning/lifecycle.ts';
import {
  cancelAnnouncements,
  cancelLost,
  decideCancel,
  judgeRunsheet,
  pairToAssign,
  releaseClaim,
  reofferWrite,
  taskAnnouncements,
} from '../../shared/planning/runsheet-moves.ts';
import { RUNSHEET_STATUSES } from '../../shared/planning/schemas.ts';

const AT = '2026-11-27T09:00:00.000Z';
const ASK = { planId: 'plan-1', runsheetId: 'rs-1', reason: 'customer called', by: 'planner-1', at: AT };
const runsheet = (status: RunsheetFacts['status']): RunsheetFacts => ({
  id: 'rs-1',
  name: 'North',
  status,
  ...(status === 'assigned' || status === 'in_progress' || status === 'completed'
    ? { assigned_driver: { id: 'driver-1', name: 'Ann' }, assigned_at: AT }
    : {}),
  ...(status === 'in_progress' || status === 'completed' ? { started_at: AT } : {}),
});
const said = (error: DomainError) => ({ code: error.code, detail: error.message });

describe('a runsheet move judged', () => {
  it('moves, answers again, or refuses each status as lifecycle.ts says', () => {
    const moves: RunsheetMove[] = ['assign', 'reoffer', 'cancel', 'give_back', 'report'];
    const table = Object.fromEntries(
      moves.map((move) => [
        move,
        Object.fromEntries(
          RUNSHEET_STATUSES.map((status) => [status, judgeRunsheet(move, runsheet(status), 'driver-1').kind]),
        ),
      ]),
    );
    expect(table).toEqual({
      assign: {
        open: 'move',
        offered: 'move',
        unassigned: 'move',
        assigned: 'again',
        in_progress: 'again',
        completed: 'again',
        cancelled: 'refused',
      },
      reoffer: {
        open: 'refused',
        offered: 'move',
        unassigned: 'move',
        assigned: 'refused',
        in_progress: 'refused',
        completed: 'refused',
        cancelled: 'refused',
      },
      cancel: {
        open: 'move',
        offered: 'move',
        unassigned: 'move',
        assigned: 'move',
        in_progress: 'refused',
        completed: 'refused',
        cancelled: 'again',
      },
      give_back: {
        open: 'refused',
        offered: 'refused',
        unassigned: 'refused',
        assigned: 'move',
        in_progress: 'refused',
        completed: 'refused',
        cancelled: 'refused',
      },
      report: {
        open: 'refused',
        offered: 'refused',
        unassigned: 'refused',
        assigned: 'move',
        in_progress: 'move',
        completed: 'again',
        cancelled: 'refused',
      },
    });
    // Another driver's hold is no retry of this assignment.
    const judged = judgeRunsheet('assign', runsheet('assigned'), 'driver-2');
    if (judged.kind !== 'refused') throw new Error(judged.kind);
    expect(said(judged.error)).toEqual({
      code: 'runsheet_already_assigned',
      detail: `Ann has runsheet "North" (since ${AT})`,
    });
  });

  it('X16 moves the driver’s own open offer, else none (a new pair is written)', () => {
    const pairs = [
      { id: 'p1', current_state: 'broadcasted' as const, pair: { driver: { id: 'driver-2' } } },
      { id: 'p2', current_state: 'rejected' as const, pair: { driver: { id: 'driver-1' } } },
      { id: 'p3', current_state: 'broadcasted' as const, pair: { driver: { id: 'driver-1' } } },
    ];
    expect(pairToAssign(pairs, 'driver-1')?.id).toBe('p3');
    expect(pairToAssign(pairs.slice(0, 2), 'driver-1')).toBeUndefined();
  });

  it('X17 asks the next wave on condition the group has not moved since it was read', () => {
    const write = reofferWrite(
      { planId: 'plan-1', orgId: 'org-1', runsheetId: 'rs-1', now: AT },
      { SK: 'RSPAIRS#rs-1', wave: 2, waves_allowed: 3, gen: 7 },
      { max_candidates: 4 },
    );
    expect(write).toMatchObject({
      Update: {
        Key: groupKey('plan-1', 'rs-1'),
        ConditionExpression: 'wave = :wave AND (attribute_not_exists(gen) OR gen = :gen)',
        ExpressionAttributeValues: { ':reoffer': { wave: 3, max_candidates: 4 }, ':allowed': 3, ':wave': 2, ':gen': 7 },
      },
    });
  });
});

describe('X18 decided', () => {
  it('marks the group once, and an assigned runsheet only while its claim has not started', () => {
    for (const status of ['open', 'offered', 'unassigned'] as const) {
      const decision = decideCancel(runsheet(status), ASK);
      if (decision.kind !== 'write') throw new Error(decision.kind);
      expect(decision.writes).toHaveLength(1);
      expect(decision.writes[0]).toMatchObject({
        Update: {
          Key: groupKey('plan-1', 'rs-1'),
          ConditionExpression: 'attribute_not_exists(cancelled)',
          ExpressionAttributeValues: { ':cancelled': { at: AT, reason: 'customer called', by: 'planner-1' } },
        },
      });
    }
    const assigned = decideCancel(runsheet('assigned'), ASK);
    if (assigned.kind !== 'write') throw new Error(assigned.kind);
    expect(assigned.writes[1]).toEqual({
      ConditionCheck: { Key: assignKey('plan-1', 'rs-1'), ConditionExpression: 'attribute_not_exists(started_at)' },
    });
    expect(decideCancel(runsheet('cancelled'), ASK)).toEqual({ kind: 'again' });
    const refused = decideCancel(runsheet('in_progress'), ASK);
    expect(refused.kind === 'refused' && said(refused.error)).toEqual({
      code: 'conflict',
      detail: 'runsheet "North" is in progress: it can no longer be cancelled',
    });
  });

  it('a mark that lost to the driver’s first event is refused; one that lost to another cancel goes on', () => {
    expect(said(cancelLost(runsheet('assigned'), [1])!)).toEqual({
      code: 'conflict',
      detail: 'runsheet "North" is in progress: it can no longer be cancelled',
    });
    expect(cancelLost(runsheet('assigned'), [0])).toBeUndefined();
    expect(cancelLost(runsheet('offered'), [])).toBeUndefined();
  });

  it('gives the driver their place back, drops the claim, tells them, then tells the planning and partners', () => {
    const release = releaseClaim(ASK, { pair_id: 'p3', driver_id: 'driver-1', assigned_at: AT });
    expect(release.count).toMatchObject({
      Update: { Key: winsKey('plan-1', 'driver-1'), ConditionExpression: 'wins > :zero' },
    });
    expect(release.claim).toEqual({ Delete: { Key: assignKey('plan-1', 'rs-1') } });
    expect(release.told).toEqual([
      {
        to: 'channel',
        channel: 'user.driver-1',
        name: 'runsheet.cancelled',
        event: {
          key: 'rs-1:cancelled',
          data: { planning_id: 'plan-1', runsheet_id: 'rs-1', pair_id: 'p3', reason: 'customer called' },
        },
      },
    ]);
    expect(cancelAnnouncements(ASK, 'org-1').map((a) => `${a.to}:${a.to === 'channel' ? a.channel : ''}`)).toEqual([
      'channel:planning.plan-1',
      'partners:',
    ]);
  });
});

describe('X20 told', () => {
  const base = {
    planId: 'plan-1',
    orgId: 'org-1',
    runsheetId: 'rs-1',
    task: { id: 't1', task_ref: 'REF-1' },
    driver: { id: 'driver-1', name: 'Ann' },
    type: 'delivered' as const,
    entry: { status: 'delivered', happened_at_utc: AT, proof_ids: ['pr1'] },
  };

  it('tells the event, keyed by the event itself, on the planning and to partners', () => {
    const told = taskAnnouncements({ ...base, claim: { pair_id: 'p3', driver_id: 'driver-1', assigned_at: AT } });
    expect(told).toHaveLength(2);
    expect(told[0]).toMatchObject({
      to: 'channel',
      channel: 'planning.plan-1',
      name: 'task.delivered',
      event: {
        key: `rs-1:t1:delivered:${AT}`,
        data: { task_ref: 'REF-1', latitude: null, failure_reason: null, proof_ids: ['pr1'] },
      },
    });
    expect(told[1]).toMatchObject({ to: 'partners', type: 'task.delivered', key: `rs-1:t1:delivered:${AT}` });
  });

  it('tells runsheet.completed after the event that finished the last task, with its counts', () => {
    const told = taskAnnouncements({
      ...base,
      claim: {
        pair_id: 'p3',
        driver_id: 'driver-1',
        assigned_at: AT,
        completed_at: AT,
        tasks_done: 3,
        tasks_failed: 1,
        tasks_total: 3,
      },
    });
    expect(told.map((a) => (a.to === 'channel' ? a.name : a.to === 'partners' ? a.type : a.to))).toEqual([
      'task.delivered',
      'task.delivered',
      'runsheet.completed',
      'runsheet.completed',
    ]);
    expect(told[2]).toMatchObject({
      event: { key: 'rs-1:completed:p3', data: { tasks_total: 3, tasks_delivered: 2, tasks_failed: 1 } },
    });
  });
});
