/**
 * The three machines of shared/planning/lifecycle.ts, edge by edge: every state against every move, legal or not,
 * with the state a legal move leaves, what it causes, and the exact 409 (code and sentence) a refused one answers
 * (contract 4.6–4.8; the e2e files pin the same sentences through HTTP). A changed edge shows here as a changed row.
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../shared/errors.ts';
import {
  askJob,
  askNewJob,
  askRunsheet,
  driverAtCapacity,
  isFinished,
  isOpenPair,
  nextStatus,
  OPEN_OFFER,
  PAIR_MOVES,
  type PairAction,
  type PairFacts,
  type PairState,
  pairMove,
  pairRefusal,
  pairRunsheetTaken,
  pairStateAfter,
  RUNSHEET_MOVES,
  type RunsheetFacts,
  type RunsheetMove,
  runsheetRefusal,
  TASK_MOVES,
  type TaskStatus,
  taskRefusal,
} from '../../shared/planning/lifecycle.ts';
import {
  JOB_STATUSES,
  PAIR_ACTIONS,
  PAIR_STATES,
  RUNSHEET_STATUSES,
  TASK_EVENT_TYPES,
  TASK_STATUSES,
} from '../../shared/planning/schemas.ts';

const AT = '2026-11-27T08:00:00.000Z';
const EXPIRY = '2026-11-27T08:05:00.000Z';
type Move = Exclude<PairAction, 'created'>;
const MOVES = PAIR_ACTIONS.filter((a): a is Move => a !== 'created');

/** What a refusal answers: its kind, code and sentence (the HTTP floor maps a conflict to 409, a not_found to 404). */
const said = (error: DomainError) => ({ kind: error.kind, code: error.code, detail: error.message });

describe('the planning job machine', () => {
  it('moves queued → processing → completed, fails or is cancelled from either, and ends there', () => {
    const table = Object.fromEntries(
      JOB_STATUSES.map((from) => [
        from,
        Object.fromEntries(
          JOB_STATUSES.map((to) => {
            try {
              askJob(from, to);
              return [to, 'moves'];
            } catch (error) {
              if (!(error instanceof DomainError)) throw error;
              expect(said(error)).toEqual({
                kind: 'conflict',
                code: 'conflict',
                detail: `a planning job cannot move from ${from} to ${to}`,
              });
              return [to, 'refused'];
            }
          }),
        ),
      ]),
    );
    const R = 'refused';
    const M = 'moves';
    expect(table).toEqual({
      queued: { queued: R, processing: M, completed: R, failed: M, cancelled: M },
      processing: { queued: R, processing: R, completed: M, failed: M, cancelled: M },
      completed: { queued: R, processing: R, completed: R, failed: R, cancelled: R },
      failed: { queued: R, processing: R, completed: R, failed: R, cancelled: R },
      cancelled: { queued: R, processing: R, completed: R, failed: R, cancelled: R },
    });
  });

  it('starts a new job only once the current one has ended', () => {
    for (const current of [undefined, 'completed', 'failed', 'cancelled'] as const)
      expect(askNewJob(current)).toBe(undefined);
    for (const current of ['queued', 'processing'] as const) {
      expect(() => askNewJob(current)).toThrow(
        expect.objectContaining({
          kind: 'conflict',
          code: 'conflict',
          message: 'a job of this planning is already queued or running',
        }),
      );
    }
  });
});

describe('the pair machine', () => {
  it('moves every state by every action to this state, or refuses', () => {
    const table = Object.fromEntries(
      PAIR_STATES.map((state) => [
        state,
        Object.fromEntries(MOVES.map((action) => [action, pairMove(state, action) ?? 'refused'])),
      ]),
    );
    const R = 'refused';
    // A closed offer (rejected, withdrawn) only goes on to be deleted.
    const ENDED = Object.fromEntries(MOVES.map((action) => [action, action === 'deleted' ? 'deleted' : R]));
    expect(table).toEqual({
      created: {
        broadcast: 'broadcasted',
        accepted: R,
        rejected: R,
        system_rejected: 'rejected',
        deleted: 'deleted',
        assigned: 'accepted',
        withdrawn: R,
      },
      broadcasted: {
        broadcast: R,
        accepted: 'accepted',
        rejected: 'rejected',
        system_rejected: 'rejected',
        deleted: 'deleted',
        assigned: 'accepted',
        withdrawn: R,
      },
      accepted: {
        broadcast: R,
        accepted: R,
        rejected: R,
        system_rejected: R,
        deleted: 'deleted',
        assigned: R,
        withdrawn: 'withdrawn',
      },
      rejected: ENDED,
      deleted: {
        broadcast: R,
        accepted: R,
        rejected: R,
        system_rejected: R,
        deleted: R,
        assigned: R,
        withdrawn: R,
      },
      withdrawn: ENDED,
    });
    expect(PAIR_STATES.filter(isOpenPair)).toEqual(['created', 'broadcasted']);
    // The open offer the sweeps look for is what a broadcast leaves and what a driver answers.
    expect([PAIR_MOVES.broadcast.to, ...PAIR_MOVES.accepted.from, ...PAIR_MOVES.rejected.from]).toEqual([
      OPEN_OFFER,
      OPEN_OFFER,
      OPEN_OFFER,
    ]);
  });

  it('names the state each action leaves (a stored status entry keeps its action only)', () => {
    const actions = ['created', ...Object.keys(PAIR_MOVES)] as PairAction[];
    expect(Object.fromEntries(actions.map((action) => [action, pairStateAfter(action)]))).toEqual({
      created: 'created',
      broadcast: 'broadcasted',
      accepted: 'accepted',
      rejected: 'rejected',
      system_rejected: 'rejected',
      deleted: 'deleted',
      assigned: 'accepted',
      withdrawn: 'withdrawn',
    });
  });

  it('says what each legal move causes', () => {
    expect(Object.fromEntries(MOVES.map((a) => [a, PAIR_MOVES[a].causes]))).toEqual({
      broadcast: ['offer_told'],
      accepted: ['runsheet_claimed', 'rivals_closed', 'capacity_closes', 'driver_told'],
      rejected: ['wave_due'],
      system_rejected: ['wave_due'],
      deleted: [],
      assigned: ['runsheet_claimed', 'rivals_closed', 'capacity_closes', 'driver_told'],
      withdrawn: ['runsheet_released', 'wave_due'],
    });
  });

  /** A record in `state`, its last entry `last` (the broadcast's expiry kept on the broadcast entry). */
  const record = (state: PairState, last: { action: PairAction; reason?: string } = { action: 'broadcast' }) =>
    ({
      current_state: state,
      pair: { runsheet: { name: 'North 1' } },
      statuses: [
        { action: 'created', reason: null, happened_at_utc: '2026-11-27T07:59:00.000Z', expired_time: null },
        { action: 'broadcast', reason: null, happened_at_utc: '2026-11-27T07:59:30.000Z', expired_time: EXPIRY },
        { action: last.action, reason: last.reason ?? null, happened_at_utc: AT, expired_time: null },
      ],
    }) satisfies PairFacts;

  /** The first half of every refusal of a pair in this state (the driver's words when `own`). */
  const WHAT: Record<string, (own: boolean) => string> = {
    created: () => 'this offer has not been broadcast yet',
    broadcasted: () => `this offer was broadcast at ${AT} and is open`,
    accepted: (own) => `${own ? 'you' : 'the driver'} accepted this offer at ${AT}`,
    withdrawn: (own) => `${own ? 'you' : 'the driver'} gave this runsheet back at ${AT}`,
    deleted: () => `this pair record was deleted at ${AT}`,
    'rejected by the driver': (own) => `${own ? 'you' : 'the driver'} rejected this offer at ${AT}`,
    'rejected: expired': () => `this offer expired at ${EXPIRY}`,
    'rejected: assigned_to_other_driver': () => `another driver has runsheet "North 1": this offer was closed at ${AT}`,
    'rejected: driver_at_capacity': () => `this offer was closed at ${AT} (driver_at_capacity)`,
  };
  // Each move is named by its action, but the system's close.
  const VERB = (move: Move) => (move === 'system_rejected' ? 'closed' : move);
  const CASES: Record<string, PairFacts> = {
    created: record('created', { action: 'created' }),
    broadcasted: record('broadcasted'),
    accepted: record('accepted', { action: 'accepted' }),
    withdrawn: record('withdrawn', { action: 'withdrawn' }),
    deleted: record('deleted', { action: 'deleted' }),
    'rejected by the driver': record('rejected', { action: 'rejected' }),
    'rejected: expired': record('rejected', { action: 'system_rejected', reason: 'expired' }),
    'rejected: assigned_to_other_driver': record('rejected', {
      action: 'system_rejected',
      reason: 'assigned_to_other_driver',
    }),
    'rejected: driver_at_capacity': record('rejected', { action: 'system_rejected', reason: 'driver_at_capacity' }),
  };

  it('refuses every illegal edge with a 409 conflict that says what happened and what cannot be done', () => {
    let edges = 0;
    for (const [name, facts] of Object.entries(CASES)) {
      for (const action of MOVES) {
        if (pairMove(facts.current_state, action)) continue;
        for (const own of [true, false]) {
          expect(said(pairRefusal(facts, action, own)), `${name} × ${action}`).toEqual({
            kind: 'conflict',
            code: 'conflict',
            detail: `${WHAT[name]!(own)}; it cannot be ${VERB(action)} now`,
          });
        }
        edges++;
      }
    }
    // 29 illegal (state, action) edges, the rejected state told four ways.
    expect(edges).toBe(29 + 3 * 6);
  });

  it('says a runsheet another driver holds is gone, and a full driver is full', () => {
    expect(said(pairRunsheetTaken(CASES['broadcasted']!, AT))).toEqual({
      kind: 'conflict',
      code: 'runsheet_already_assigned',
      detail: `another driver has runsheet "North 1" (accepted at ${AT}): this offer is closed`,
    });
    expect(said(pairRunsheetTaken({ ...CASES['broadcasted']!, pair: { runsheet: {} } }, AT)).detail).toBe(
      `another driver has this runsheet (accepted at ${AT}): this offer is closed`,
    );
    expect(said(driverAtCapacity(1, true))).toEqual({
      kind: 'conflict',
      code: 'driver_at_capacity',
      detail: 'you already hold 1 runsheet of this planning, the most one driver may (max_runsheets_per_driver)',
    });
    expect(said(driverAtCapacity(3, false)).detail).toBe(
      'the driver already holds 3 runsheets of this planning, the most one driver may (max_runsheets_per_driver)',
    );
  });
});

describe('the runsheet machine', () => {
  const MOVES_OF_RUNSHEET = Object.keys(RUNSHEET_MOVES) as RunsheetMove[];
  const facts = (status: RunsheetFacts['status']): RunsheetFacts => ({
    id: 'rs-1',
    name: 'North 1',
    status,
    ...(['assigned', 'in_progress', 'completed'].includes(status)
      ? { assigned_driver: { id: 'd-1', name: 'Dana' }, assigned_at: AT }
      : {}),
    ...(['in_progress', 'completed'].includes(status) ? { started_at: EXPIRY } : {}),
  });
  const ask = (move: RunsheetMove, runsheet: RunsheetFacts, driverId?: string) => {
    try {
      return askRunsheet(move, runsheet, driverId);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return said(error);
    }
  };
  const no = (detail: string, code = 'conflict') => ({ kind: 'conflict', code, detail });
  const RS = 'runsheet "North 1"';
  const HIDDEN = { kind: 'not_found', code: 'not_found', detail: 'runsheet does not exist or is not visible to you' };
  const GONE = no('this runsheet is no longer assigned to this pair (the dispatcher cancelled or reassigned it)');
  const UNDER_WAY = no(
    `this runsheet is in progress (its first task was reported at ${EXPIRY}): it can no longer be given back`,
  );

  it('answers every move from every status: move, again (a retry), or its refusal', () => {
    const table = Object.fromEntries(
      RUNSHEET_STATUSES.map((status) => [
        status,
        Object.fromEntries(MOVES_OF_RUNSHEET.map((move) => [move, ask(move, facts(status), 'd-1')])),
      ]),
    );
    expect(table).toEqual({
      open: {
        assign: 'move',
        reoffer: no(`${RS} was never offered: start the planning's job (P9) first`),
        cancel: 'move',
        give_back: GONE,
        report: HIDDEN,
      },
      offered: { assign: 'move', reoffer: 'move', cancel: 'move', give_back: GONE, report: HIDDEN },
      unassigned: { assign: 'move', reoffer: 'move', cancel: 'move', give_back: GONE, report: HIDDEN },
      assigned: {
        assign: 'again',
        reoffer: no(`${RS} is assigned: only an offered or unassigned runsheet is offered again`),
        cancel: 'move',
        give_back: 'move',
        report: 'move',
      },
      in_progress: {
        assign: 'again',
        reoffer: no(`${RS} is in_progress: only an offered or unassigned runsheet is offered again`),
        cancel: no(`${RS} is in progress: it can no longer be cancelled`),
        give_back: UNDER_WAY,
        report: 'move',
      },
      completed: {
        assign: 'again',
        reoffer: no(`${RS} is completed: only an offered or unassigned runsheet is offered again`),
        cancel: no(`${RS} is completed: it can no longer be cancelled`),
        give_back: UNDER_WAY,
        report: 'again',
      },
      cancelled: {
        assign: no(`${RS} was cancelled: it cannot be assigned`),
        reoffer: no(`${RS} is cancelled: only an offered or unassigned runsheet is offered again`),
        cancel: 'again',
        give_back: GONE,
        report: no(`${RS} was cancelled: its tasks can no longer be reported`),
      },
    });
  });

  it('refuses an assignment to another driver of a runsheet somebody holds, naming who and since when', () => {
    for (const status of ['assigned', 'in_progress', 'completed'] as const) {
      expect(ask('assign', facts(status), 'd-2')).toEqual(
        no(`Dana has ${RS} (since ${AT})`, 'runsheet_already_assigned'),
      );
    }
    const nameless = { ...facts('assigned'), name: undefined, assigned_driver: { id: 'd-1', name: '' } };
    expect(ask('assign', nameless, 'd-2')).toEqual(
      no(`another driver has runsheet "rs-1" (since ${AT})`, 'runsheet_already_assigned'),
    );
  });

  it('says where each legal move leaves the runsheet and what it causes', () => {
    // (Where each move is legal from is the table above; here, where it leaves the runsheet and what it causes.)
    expect(
      Object.fromEntries(MOVES_OF_RUNSHEET.map((m) => [m, `${RUNSHEET_MOVES[m].to}: ${RUNSHEET_MOVES[m].causes}`])),
    ).toEqual({
      assign: 'assigned: runsheet_claimed,rivals_closed,capacity_closes,driver_told',
      reoffer: 'offered: wave_due',
      cancel: 'cancelled: offers_closed,runsheet_released,driver_told',
      give_back: 'offered: runsheet_released,wave_due',
      report: 'in_progress: runsheet_started',
    });
    // Every refusal the table implies is the one runsheetRefusal says.
    for (const move of MOVES_OF_RUNSHEET) {
      for (const status of RUNSHEET_STATUSES) {
        const answer = ask(move, facts(status), 'd-2');
        if (typeof answer !== 'string') expect(answer).toEqual(said(runsheetRefusal(move, facts(status))));
      }
    }
  });
});

describe('the task machine', () => {
  it('moves pending → picked_up → delivered | failed, failed also from pending; arrived changes nothing', () => {
    const table = Object.fromEntries(
      TASK_STATUSES.map((status) => [
        status,
        Object.fromEntries(TASK_EVENT_TYPES.map((type) => [type, nextStatus(status, type) ?? 'refused'])),
      ]),
    );
    expect(table).toEqual({
      pending: { arrived: 'pending', picked_up: 'picked_up', delivered: 'refused', failed: 'failed' },
      picked_up: { arrived: 'picked_up', picked_up: 'refused', delivered: 'delivered', failed: 'failed' },
      delivered: { arrived: 'refused', picked_up: 'refused', delivered: 'refused', failed: 'refused' },
      failed: { arrived: 'refused', picked_up: 'refused', delivered: 'refused', failed: 'refused' },
    });
    expect(TASK_STATUSES.filter(isFinished)).toEqual(['delivered', 'failed']);
    expect(Object.keys(TASK_MOVES).sort()).toEqual([...TASK_EVENT_TYPES].sort());
  });

  const timeline = (status: TaskStatus) =>
    status === 'pending'
      ? [{ type: 'arrived' as const, status: 'pending' as const, happened_at_utc: '2026-11-27T07:58:00.000Z' }]
      : [
          { type: 'arrived' as const, status: 'pending' as const, happened_at_utc: '2026-11-27T07:58:00.000Z' },
          ...(status === 'failed'
            ? []
            : [{ type: 'picked_up' as const, status: 'picked_up' as const, happened_at_utc: EXPIRY }]),
          ...(status === 'delivered' || status === 'failed' ? [{ type: status, status, happened_at_utc: AT }] : []),
        ];

  it('refuses every illegal event with a 409 conflict that names the task, its status and when it got there', () => {
    const refused = Object.fromEntries(
      TASK_STATUSES.map((status) => [
        status,
        Object.fromEntries(
          TASK_EVENT_TYPES.filter((type) => !TASK_MOVES[type].from.includes(status)).map((type) => [
            type,
            said(taskRefusal({ words: 'task T-17', status, timeline: timeline(status) }, type)).detail,
          ]),
        ),
      ]),
    );
    expect(refused).toEqual({
      pending: {
        delivered: 'task T-17 has not been picked up yet: it cannot be delivered before its pickup',
      },
      picked_up: {
        picked_up: `task T-17 was picked up at ${EXPIRY}; it cannot be picked up again`,
      },
      delivered: {
        arrived: `task T-17 was delivered at ${AT}; it cannot be reported as arrived now`,
        picked_up: `task T-17 was delivered at ${AT}; it cannot be picked up now`,
        delivered: `task T-17 was delivered at ${AT}; it cannot be delivered now`,
        failed: `task T-17 was delivered at ${AT}; it cannot be reported failed now`,
      },
      failed: {
        arrived: `task T-17 was reported failed at ${AT}; it cannot be reported as arrived now`,
        picked_up: `task T-17 was reported failed at ${AT}; it cannot be picked up now`,
        delivered: `task T-17 was reported failed at ${AT}; it cannot be delivered now`,
        failed: `task T-17 was reported failed at ${AT}; it cannot be reported failed now`,
      },
    });
    expect(said(taskRefusal({ words: 'task T-17', status: 'delivered', timeline: [] }, 'failed'))).toEqual({
      kind: 'conflict',
      code: 'conflict',
      detail: 'task T-17 was delivered; it cannot be reported failed now',
    });
  });

  it('says what each event causes', () => {
    expect(Object.fromEntries(TASK_EVENT_TYPES.map((t) => [t, TASK_MOVES[t].causes]))).toEqual({
      arrived: ['runsheet_started'],
      picked_up: ['runsheet_started'],
      delivered: ['runsheet_started', 'task_finished'],
      failed: ['runsheet_started', 'task_finished'],
    });
  });
});
