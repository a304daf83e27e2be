/**
 * A pair's moves decided as data (shared/planning/pair-moves.ts, issue 56): every state × move, what each write
 * holds on (the record's revision, the claim nobody has, the driver's count below the limit), the facts a decision
 * asks for before it answers, the refusals after a lost write (the runsheet taken, the driver at capacity, a
 * give-back under way, a record that keeps changing), the retry of a recorded event, and what each move announces in
 * order. The emulator tests (broadcast-records, move-races, driver-events, dispatch-day, capacity) prove the same
 * through DynamoDB's conditions; here the decisions are read one by one.
 */
import { describe, expect, it } from 'vitest';
import type { DomainError } from '../../shared/errors.ts';
import { assignKey } from '../../shared/planning/keys.ts';
import { PAIR_MOVES, type PairState, pairMove, pairRefusal } from '../../shared/planning/lifecycle.ts';
import {
  CONTENDED,
  decidePairMove,
  type PairAsk,
  type PairDecision,
  type PairMoveAction,
  type PairReading,
  pairAnnouncements,
} from '../../shared/planning/pair-moves.ts';
import type { PairRecord, StatusEntry } from '../../shared/planning/pair-records.ts';
import { PAIR_ACTIONS, PAIR_STATES } from '../../shared/planning/schemas.ts';

const MOVES = PAIR_ACTIONS.filter((a): a is PairMoveAction => a !== 'created');
const CREATED = '2026-11-27T08:00:00.000Z';
const BROADCAST = '2026-11-27T08:00:01.000Z';
const LAST = '2026-11-27T08:01:00.000Z';
const HAPPENED = '2026-11-27T08:02:00.000Z';
const NOW = '2026-11-27T08:02:00.500Z';
const DRIVER = 'driver-1';

const status = (action: StatusEntry['action'], state: PairState, at: string, reason: string | null = null) => ({
  current_state: state,
  action,
  reason,
  expired_time: action === 'broadcast' ? '2026-11-27T08:15:01.000Z' : null,
  happened_at_utc: at,
  saved_at_utc: at,
});

/** A pair record in `state`, with the history that leads there. */
function pairIn(state: PairState, extra: Partial<PairRecord> = {}): PairRecord {
  const statuses: StatusEntry[] = [status('created', 'created', CREATED)];
  if (state !== 'created') statuses.push(status('broadcast', 'broadcasted', BROADCAST));
  if (state === 'accepted' || state === 'withdrawn') statuses.push(status('accepted', 'accepted', LAST));
  if (state === 'withdrawn') statuses.push(status('withdrawn', 'withdrawn', LAST));
  if (state === 'rejected') statuses.push(status('system_rejected', 'rejected', LAST, 'expired'));
  if (state === 'deleted') statuses.push(status('deleted', 'deleted', LAST));
  return {
    id: 'pair-1',
    pair: { id: 'pair-1', runsheet: { id: 'rs-1', name: 'North', tasks: [] }, driver: { id: DRIVER, name: 'Ann' } },
    plan: { id: 'plan-1', name: 'Monday' },
    statuses,
    current_state: state,
    org_id: 'org-1',
    rev: statuses.length,
    offer_ttl_s: 900,
    ...extra,
  };
}

const asked = (action: PairMoveAction, more: Partial<PairAsk> = {}): PairAsk => ({
  action,
  happened: HAPPENED,
  reason: action === 'system_rejected' ? 'expired' : null,
  judgedNow: false,
  now: NOW,
  ...more,
});

const said = (error: DomainError) => ({ kind: error.kind, code: error.code, detail: error.message });
function refused(decision: PairDecision) {
  if (decision.kind !== 'refused') throw new Error(`expected a refusal, got ${decision.kind}`);
  return said(decision.error);
}

describe('a pair move decided from what was read', () => {
  it('writes every legal state × move and refuses every other one in the machine’s words', () => {
    for (const state of PAIR_STATES) {
      for (const action of MOVES) {
        const record = pairIn(state);
        const decision = decidePairMove({ record, limit: 3, claim: null, tries: 0 }, asked(action));
        const to = pairMove(state, action);
        if (!to) {
          expect(refused(decision), `${state} × ${action}`).toEqual(said(pairRefusal(record, action, false)));
          continue;
        }
        if (decision.kind !== 'write') throw new Error(`${state} × ${action}: ${decision.kind}`);
        expect(decision.record.current_state).toBe(to);
        expect(decision.record.rev).toBe(record.rev + 1);
        expect(decision.record.statuses.at(-1)).toEqual({
          current_state: to,
          action,
          reason: asked(action).reason,
          expired_time: action === 'broadcast' ? '2026-11-27T08:17:00.000Z' : null,
          happened_at_utc: HAPPENED,
          saved_at_utc: NOW,
        });
        // The pair's put holds on the revision read; a win adds the claim and the count, a give-back takes them back.
        const [put, ...beside] = decision.writes;
        expect(put).toMatchObject({
          Put: { ConditionExpression: 'rev = :rev', ExpressionAttributeValues: { ':rev': record.rev } },
        });
        expect(beside.map((w) => Object.keys(w)[0])).toEqual(
          action === 'accepted' || action === 'assigned'
            ? ['Put', 'Update']
            : action === 'withdrawn'
              ? ['Delete', 'Update']
              : [],
        );
      }
    }
  });

  it('claims the runsheet on condition nobody has it, and counts the win below the planning’s limit', () => {
    const decision = decidePairMove({ record: pairIn('broadcasted'), limit: 2, tries: 0 }, asked('accepted'));
    if (decision.kind !== 'write') throw new Error(decision.kind);
    expect(decision.writes[1]).toMatchObject({
      Put: {
        Item: { ...assignKey('plan-1', 'rs-1'), pair_id: 'pair-1', driver_id: DRIVER, assigned_at: NOW },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    });
    expect(decision.writes[2]).toMatchObject({
      Update: {
        ConditionExpression: 'attribute_not_exists(wins) OR wins < :limit',
        ExpressionAttributeValues: { ':limit': 2, ':one': 1 },
      },
    });
  });

  it('gives back only a claim still this pair’s and not under way', () => {
    const decision = decidePairMove({ record: pairIn('accepted'), tries: 0 }, asked('withdrawn'));
    if (decision.kind !== 'write') throw new Error(decision.kind);
    expect(decision.writes[1]).toMatchObject({
      Delete: {
        ConditionExpression: 'pair_id = :pair AND attribute_not_exists(started_at)',
        ExpressionAttributeValues: { ':pair': 'pair-1' },
      },
    });
    expect(decision.writes[2]).toMatchObject({ Update: { UpdateExpression: 'ADD wins :minus' } });
  });

  it('asks for the limit before a win, and for the claim before refusing one', () => {
    expect(decidePairMove({ record: pairIn('broadcasted'), tries: 0 }, asked('accepted'))).toEqual({
      kind: 'read',
      need: 'limit',
    });
    expect(decidePairMove({ record: pairIn('rejected'), tries: 0 }, asked('accepted'))).toEqual({
      kind: 'read',
      need: 'claim',
    });
    // No other move reads either.
    expect(decidePairMove({ record: pairIn('broadcasted'), tries: 0 }, asked('rejected')).kind).toBe('write');
    expect(decidePairMove({ record: pairIn('rejected'), tries: 0 }, asked('rejected')).kind).toBe('refused');
  });

  it('refuses an accept of a runsheet another pair holds with runsheet_already_assigned, whatever this pair is', () => {
    const claim = { pair_id: 'pair-2', assigned_at: LAST };
    for (const state of ['rejected', 'accepted', 'deleted'] as const) {
      expect(refused(decidePairMove({ record: pairIn(state), claim, tries: 0 }, asked('accepted')))).toEqual({
        kind: 'conflict',
        code: 'runsheet_already_assigned',
        detail: `another driver has runsheet "North" (accepted at ${LAST}): this offer is closed`,
      });
    }
    // Its own claim, or none: the pair's own refusal, said to its driver.
    expect(
      refused(
        decidePairMove({ record: pairIn('accepted'), claim: null, tries: 0 }, asked('accepted', { driverId: DRIVER })),
      ).detail,
    ).toBe(`you accepted this offer at ${LAST}; it cannot be accepted now`);
  });

  it('answers another driver’s pair, or none, as not found', () => {
    expect(refused(decidePairMove({ record: undefined, tries: 0 }, asked('accepted')))).toMatchObject({
      kind: 'not_found',
    });
    expect(
      refused(decidePairMove({ record: pairIn('broadcasted'), tries: 0 }, asked('accepted', { driverId: 'other' }))),
    ).toMatchObject({ kind: 'not_found' });
  });
});

describe('after a write that lost', () => {
  const lostAccept = (lost: number[], more: Partial<PairReading> = {}, ask = asked('accepted')) =>
    decidePairMove({ record: pairIn('broadcasted'), lost, tries: 1, ...more }, ask);

  it('two accepts of one runsheet: the loser reads the claim and is told another driver has it', () => {
    expect(lostAccept([1])).toEqual({ kind: 'read', need: 'claim' });
    expect(refused(lostAccept([1], { claim: { pair_id: 'pair-2', assigned_at: NOW } }))).toMatchObject({
      code: 'runsheet_already_assigned',
    });
  });

  it('a win past the driver’s limit reads the limit as it is and answers driver_at_capacity', () => {
    expect(lostAccept([2])).toEqual({ kind: 'read', need: 'limit' });
    expect(refused(lostAccept([2], { limit: 1 }, asked('accepted', { driverId: DRIVER })))).toEqual({
      kind: 'conflict',
      code: 'driver_at_capacity',
      detail: 'you already hold 1 runsheet of this planning, the most one driver may (max_runsheets_per_driver)',
    });
    expect(refused(lostAccept([2], { limit: 3 }, asked('assigned'))).detail).toBe(
      'the driver already holds 3 runsheets of this planning, the most one driver may (max_runsheets_per_driver)',
    );
  });

  it('a record that changed meanwhile is read again consistently, and given up after five writes', () => {
    expect(lostAccept([0])).toEqual({ kind: 'read', need: 'record' });
    expect(decidePairMove({ record: pairIn('broadcasted'), lost: [0], tries: 4 }, asked('rejected'))).toEqual({
      kind: 'read',
      need: 'record',
    });
    expect(refused(decidePairMove({ record: pairIn('broadcasted'), lost: [0], tries: 5 }, asked('rejected')))).toEqual({
      kind: 'conflict',
      code: 'conflict',
      detail: CONTENDED,
    });
  });

  it('a give-back that lost its claim says whether the runsheet is under way or no longer this pair’s', () => {
    const lost = (claim?: PairReading['claim']) =>
      decidePairMove(
        { record: pairIn('accepted'), lost: [1], tries: 1, ...(claim !== undefined ? { claim } : {}) },
        asked('withdrawn', { driverId: DRIVER }),
      );
    expect(lost()).toEqual({ kind: 'read', need: 'claim' });
    expect(refused(lost({ pair_id: 'pair-1', started_at: LAST })).detail).toBe(
      `this runsheet is in progress (its first task was reported at ${LAST}): it can no longer be given back`,
    );
    expect(refused(lost(null)).detail).toBe(
      'this runsheet is no longer assigned to this pair (the dispatcher cancelled or reassigned it)',
    );
    // Only the pair's own revision lost: read again.
    expect(
      decidePairMove({ record: pairIn('accepted'), lost: [0], tries: 1 }, asked('withdrawn', { driverId: DRIVER })),
    ).toEqual({ kind: 'read', need: 'record' });
  });
});

describe('a recorded move and what it announces', () => {
  it('answers the same event again as recorded, telling it again only while the pair is where it left it', () => {
    const record = pairIn('accepted');
    const again = decidePairMove({ record, tries: 0 }, asked('accepted', { happened: LAST }));
    expect(again).toMatchObject({ kind: 'done', record });
    expect(again.kind === 'done' && again.announcements.length).toBe(5);
    const moved = decidePairMove({ record: pairIn('withdrawn'), tries: 0 }, asked('accepted', { happened: LAST }));
    expect(moved).toEqual({ kind: 'done', record: pairIn('withdrawn'), announcements: [] });
  });

  it('tells a win, then closes its rivals and the driver’s offers at capacity, then tells the driver', () => {
    const record = pairIn('accepted');
    const written = decidePairMove({ record: pairIn('broadcasted'), written: record, tries: 1 }, asked('accepted'));
    if (written.kind !== 'done') throw new Error(written.kind);
    expect(written.announcements.map((a) => (a.to === 'channel' ? a.name : a.to === 'closes' ? a.of : a.to))).toEqual([
      'pair.accepted',
      'partners',
      'rivals',
      'capacity',
      'runsheet.assigned',
    ]);
    const assigned = pairAnnouncements(record, 'assigned');
    expect(assigned[0]).toMatchObject({ to: 'channel', channel: 'planning.plan-1', name: 'pair.assigned' });
    expect(assigned[1]).toMatchObject({ to: 'partners', type: 'pair.assigned', key: 'pair-1:assigned' });
  });

  it('marks the runsheet due for its next wave after a close that may leave it without an open offer', () => {
    const swept = pairIn('rejected', { plan_swept: true });
    const kinds = (action: PairMoveAction, reason: string | null, judgedNow = false) =>
      pairAnnouncements(
        { ...swept, statuses: [...swept.statuses, status(action, 'rejected', HAPPENED, reason)] },
        action,
        judgedNow,
      ).map((a) => (a.to === 'channel' ? `${a.name}@${a.channel}` : a.to === 'waves' ? `waves+${a.extraWave}` : a.to));
    expect(kinds('system_rejected', 'expired')).toEqual([
      'waves+false',
      'pair.rejected@planning.plan-1',
      `offer.closed@user.${DRIVER}`,
      'partners',
    ]);
    // Somebody has it, or it is cancelled: no next wave. The wave worker's own closes: it judges right after.
    expect(kinds('system_rejected', 'assigned_to_other_driver')[0]).toBe('pair.rejected@planning.plan-1');
    expect(kinds('system_rejected', 'runsheet_cancelled')[0]).toBe('pair.rejected@planning.plan-1');
    expect(kinds('system_rejected', 'expired', true)[0]).toBe('pair.rejected@planning.plan-1');
    // The driver's own decline: no offer.closed to them, and it says why.
    expect(kinds('rejected', null)).toEqual(['waves+false', 'pair.rejected@planning.plan-1', 'partners']);
    const declined = pairAnnouncements(swept, 'rejected')[1];
    expect(declined).toMatchObject({ event: { data: { reason: 'declined_by_driver' } } });
    // A give-back allows one wave past max_waves.
    expect(kinds('withdrawn', null)).toEqual(['waves+true', 'pair.withdrawn@planning.plan-1', 'partners']);
    // An offer R5 broadcast (not the job's): the sweep index watches it, no wave list.
    expect(pairAnnouncements(pairIn('rejected'), 'system_rejected').map((a) => a.to)).not.toContain('waves');
  });

  it('tells the driver of a broadcast with its expiry, and tells nothing of a deletion', () => {
    const record = pairIn('broadcasted');
    expect(pairAnnouncements(record, 'broadcast')).toEqual([
      {
        to: 'channel',
        channel: `user.${DRIVER}`,
        name: 'offer.new',
        event: {
          key: 'pair-1:broadcast',
          data: {
            pair_id: 'pair-1',
            planning_id: 'plan-1',
            runsheet_id: 'rs-1',
            expired_time: '2026-11-27T08:15:01.000Z',
          },
        },
      },
    ]);
    expect(pairAnnouncements(pairIn('deleted'), 'deleted')).toEqual([]);
    expect(PAIR_MOVES.deleted.causes).toEqual([]);
  });
});
