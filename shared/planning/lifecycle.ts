/**
 * One lifecycle, one module (issue 44 item 4): the planning job's statuses (contract 4.6), the runsheet's (4.7), the
 * pair's moves (4.6/4.7) and the task's statuses (4.8), as state machines written as data. For each move: from which
 * states it is legal, the state it leaves, what it causes, and the refusal (the 409's code and sentence) from every
 * other state. Repositories store, workers drive, decisions ask: job-records.ts, job.ts, pair-moves.ts (a pair's
 * moves), runsheet-moves.ts (the dispatcher's) and execution.ts ask this module which move is legal and what a refused
 * one says; where their writes' conditions name a state, it is this module's (`OPEN_OFFER`). The runsheet's status is
 * not stored (dispatch-records.ts `runsheetStatus` derives it from the offer group and the claim), so its writes hold
 * on those items' attributes instead.
 *
 * Pure: no I/O, no clock. It imports the domain's errors, and the schemas' state lists as types only.
 */
import { conflict, type DomainError, notFound } from '#shared/errors';
import type {
  JOB_STATUSES,
  PAIR_ACTIONS,
  PAIR_STATES,
  RUNSHEET_STATUSES,
  TASK_EVENT_TYPES,
  TASK_STATUSES,
} from '#shared/planning/schemas';

export type JobStatus = (typeof JOB_STATUSES)[number];
export type PairState = (typeof PAIR_STATES)[number];
export type PairAction = (typeof PAIR_ACTIONS)[number];
export type RunsheetStatus = (typeof RUNSHEET_STATUSES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

/** What a legal move causes beyond its own record (the workers and repositories that do it say how). */
export type Cause =
  /** The driver is told of a new offer (`offer.new`). */
  | 'offer_told'
  /** The runsheet's claim (`ASSIGN#`) and the driver's count are written in the move's transaction. */
  | 'runsheet_claimed'
  /** The runsheet's other open offers are closed by the system (`assigned_to_other_driver`). */
  | 'rivals_closed'
  /** The driver's other open offers are closed when this win fills their last place (`driver_at_capacity`). */
  | 'capacity_closes'
  /** The runsheet is marked due for the wave worker (a close that may leave it without an open offer). */
  | 'wave_due'
  /** The claim and the driver's count are given back (one wave past `max_waves` allowed). */
  | 'runsheet_released'
  /** The runsheet's open offers are closed by the system (`runsheet_cancelled`), each driver told. */
  | 'offers_closed'
  /** The driver who held the runsheet is told (`runsheet.assigned` / `runsheet.cancelled` on `user.<id>`). */
  | 'driver_told'
  /** The runsheet's first task event: it is under way (`started_at`), no longer given back nor cancelled. */
  | 'runsheet_started'
  /** The task is finished (delivered or failed): it counts towards the runsheet's `tasks_done`. */
  | 'task_finished';

export interface Move<S extends string> {
  from: readonly S[];
  /** The state the move leaves; `unchanged` keeps the one it found. */
  to: S | 'unchanged';
  causes: readonly Cause[];
}

// ----- the planning job (contract 4.6: P13–P16 and the job runner) -----

/** Where a planning job may go from each status; `completed`, `failed` and `cancelled` end it. */
export const JOB_EDGES: Record<JobStatus, readonly JobStatus[]> = {
  queued: ['processing', 'cancelled', 'failed'],
  processing: ['completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Asks whether the job may move `from` → `to`; throws the 409 that names both when it may not. */
export function askJob(from: JobStatus, to: JobStatus): void {
  if (!JOB_EDGES[from].includes(to)) throw conflict(`a planning job cannot move from ${from} to ${to}`);
}

/** Asks whether a new job may start beside the planning's current one (P9): only once that one has ended. */
export function askNewJob(current: JobStatus | undefined): void {
  if (current && JOB_EDGES[current].length > 0) throw conflict('a job of this planning is already queued or running');
}

// ----- the pair (an offer of one runsheet to one driver) -----

/** The pair machine: every action but `created` (a pair's first entry, never a move). */
export const PAIR_MOVES: Record<Exclude<PairAction, 'created'>, Move<PairState>> = {
  broadcast: { from: ['created'], to: 'broadcasted', causes: ['offer_told'] },
  accepted: {
    from: ['broadcasted'],
    to: 'accepted',
    causes: ['runsheet_claimed', 'rivals_closed', 'capacity_closes', 'driver_told'],
  },
  rejected: { from: ['broadcasted'], to: 'rejected', causes: ['wave_due'] },
  system_rejected: { from: ['created', 'broadcasted'], to: 'rejected', causes: ['wave_due'] },
  deleted: { from: ['created', 'broadcasted', 'accepted', 'rejected', 'withdrawn'], to: 'deleted', causes: [] },
  // Contract 4.7: the dispatcher gives the runsheet to the driver of an open offer (X16; without one, the pair is
  // written already assigned), and a driver gives back what they won (X19).
  assigned: {
    from: ['created', 'broadcasted'],
    to: 'accepted',
    causes: ['runsheet_claimed', 'rivals_closed', 'capacity_closes', 'driver_told'],
  },
  withdrawn: { from: ['accepted'], to: 'withdrawn', causes: ['runsheet_released', 'wave_due'] },
};

/** The state a pair's action leaves it in, or undefined when the action is illegal from `state`. */
export function pairMove(state: PairState, action: Exclude<PairAction, 'created'>): PairState | undefined {
  const move = PAIR_MOVES[action];
  if (!move.from.includes(state)) return undefined;
  return move.to === 'unchanged' ? state : move.to;
}

/** The state a pair's move leaves: each of the pair's moves names one (none keeps the state it found). */
export function pairStateAfter(action: PairAction): PairState {
  if (action === 'created') return 'created';
  const to = PAIR_MOVES[action].to;
  if (to === 'unchanged') throw new Error(`the pair's move ${action} names no state`);
  return to;
}

/**
 * The state of an offer out with its driver, waiting for an answer until it expires: what a broadcast leaves, and
 * the one state a driver's accept or decline is legal from. The sweeps' filters and conditions name it.
 */
export const OPEN_OFFER = 'broadcasted' satisfies PairState;

/** Whether the pair is an open offer the system may still close (its `system_rejected` is legal). */
export const isOpenPair = (state: PairState) => PAIR_MOVES.system_rejected.from.includes(state);

const PAIR_VERBS: Record<Exclude<PairAction, 'created'>, string> = {
  broadcast: 'broadcast',
  accepted: 'accepted',
  rejected: 'rejected',
  system_rejected: 'closed',
  deleted: 'deleted',
  assigned: 'assigned',
  withdrawn: 'withdrawn',
};

/** What the pair's refusal reads of its record (a `PairRecord` is one). */
export interface PairFacts {
  current_state: PairState;
  statuses: readonly {
    action: PairAction;
    reason: string | null;
    happened_at_utc: string;
    expired_time: string | null;
  }[];
  pair: { runsheet: { name?: string } };
}

const pairRunsheetWords = (record: PairFacts) =>
  record.pair.runsheet.name ? `runsheet "${record.pair.runsheet.name}"` : 'this runsheet';

/**
 * The 409 for a move the pair's state does not allow, in words that say what happened. `own`: the caller is the
 * pair's driver ("you accepted …"), not a dispatcher or a worker ("the driver accepted …").
 */
export function pairRefusal(record: PairFacts, action: Exclude<PairAction, 'created'>, own: boolean): DomainError {
  const last = record.statuses.at(-1);
  const at = last?.happened_at_utc;
  const driver = own ? 'you' : 'the driver';
  const cannot = `it cannot be ${PAIR_VERBS[action]} now`;
  const expiry = record.statuses.findLast((s) => s.action === 'broadcast')?.expired_time;
  let what: string;
  if (record.current_state === 'deleted') what = `this pair record was deleted at ${at}`;
  else if (record.current_state === 'created') what = 'this offer has not been broadcast yet';
  else if (record.current_state === 'broadcasted') what = `this offer was broadcast at ${at} and is open`;
  else if (record.current_state === 'accepted') what = `${driver} accepted this offer at ${at}`;
  else if (record.current_state === 'withdrawn') what = `${driver} gave this runsheet back at ${at}`;
  else if (last?.action === 'rejected') what = `${driver} rejected this offer at ${at}`;
  else if (last?.reason === 'expired') what = `this offer expired at ${expiry ?? at}`;
  else if (last?.reason === 'assigned_to_other_driver')
    what = `another driver has ${pairRunsheetWords(record)}: this offer was closed at ${at}`;
  else what = `this offer was closed at ${at}${last?.reason ? ` (${last.reason})` : ''}`;
  return conflict(`${what}; ${cannot}`);
}

/**
 * The 409 of an accept (or an assignment) of a runsheet another driver holds, whatever became of this pair: a
 * driver's app needs only the code to tell its user the runsheet is gone.
 */
export const pairRunsheetTaken = (record: PairFacts, assignedAt: unknown): DomainError =>
  conflict(
    `another driver has ${pairRunsheetWords(record)} (accepted at ${assignedAt}): this offer is closed`,
    'runsheet_already_assigned',
  );

/** The 409 of a win the driver's runsheet limit refuses. */
export const driverAtCapacity = (limit: number, own: boolean): DomainError =>
  conflict(
    `${own ? 'you already hold' : 'the driver already holds'} ${limit} runsheet${limit === 1 ? '' : 's'} of this planning, the most one driver may (max_runsheets_per_driver)`,
    'driver_at_capacity',
  );

// ----- the runsheet (contract 4.7's statuses, 4.8's under way) -----

/**
 * The runsheet's moves: the dispatcher's (X16 assign, X17 re-offer, X18 cancel), its driver's (X19 give back, X20
 * report a task's event). `again`: the states in which the same move is answered as the first one was (a retry).
 */
export type RunsheetMove = 'assign' | 'reoffer' | 'cancel' | 'give_back' | 'report';

export const RUNSHEET_MOVES: Record<RunsheetMove, Move<RunsheetStatus> & { again: readonly RunsheetStatus[] }> = {
  // X16: from the same driver's hold, answered as it stands.
  assign: {
    from: ['open', 'offered', 'unassigned'],
    to: 'assigned',
    causes: ['runsheet_claimed', 'rivals_closed', 'capacity_closes', 'driver_told'],
    again: ['assigned', 'in_progress', 'completed'],
  },
  reoffer: { from: ['offered', 'unassigned'], to: 'offered', causes: ['wave_due'], again: [] },
  cancel: {
    from: ['open', 'offered', 'assigned', 'unassigned'],
    to: 'cancelled',
    causes: ['offers_closed', 'runsheet_released', 'driver_told'],
    again: ['cancelled'],
  },
  give_back: { from: ['assigned'], to: 'offered', causes: ['runsheet_released', 'wave_due'], again: [] },
  // The first event starts the runsheet; the one that finishes its last task completes it (execution.ts).
  report: {
    from: ['assigned', 'in_progress'],
    to: 'in_progress',
    causes: ['runsheet_started'],
    again: ['completed'],
  },
};

/** What a runsheet's refusal reads of it (X14's entry is one). */
export interface RunsheetFacts {
  id: string;
  name?: string | undefined;
  status: RunsheetStatus;
  assigned_driver?: { id: string; name: string };
  assigned_at?: string;
  started_at?: string;
}

export const runsheetWords = (runsheet: { id: string; name?: string | undefined }) =>
  `runsheet "${runsheet.name ?? runsheet.id}"`;

/** The 409 of a runsheet move its status does not allow, in words that say what happened. */
export function runsheetRefusal(move: RunsheetMove, runsheet: RunsheetFacts): DomainError {
  const words = runsheetWords(runsheet);
  const { status } = runsheet;
  switch (move) {
    case 'assign':
      if (status === 'cancelled') return conflict(`${words} was cancelled: it cannot be assigned`);
      return conflict(
        `${runsheet.assigned_driver?.name || 'another driver'} has ${words} (since ${runsheet.assigned_at})`,
        'runsheet_already_assigned',
      );
    case 'reoffer':
      if (status === 'open') return conflict(`${words} was never offered: start the planning's job (P9) first`);
      return conflict(`${words} is ${status}: only an offered or unassigned runsheet is offered again`);
    case 'cancel':
      return conflict(`${words} is ${status.replace('_', ' ')}: it can no longer be cancelled`);
    case 'give_back':
      // Said of the pair that won it (X19): its runsheet under way, or no longer its own.
      if (status === 'in_progress' || status === 'completed') {
        return conflict(
          `this runsheet is in progress (its first task was reported at ${runsheet.started_at}): it can no longer be given back`,
        );
      }
      return conflict('this runsheet is no longer assigned to this pair (the dispatcher cancelled or reassigned it)');
    case 'report':
      // A runsheet its driver does not hold (never won, or given back) is not theirs to see.
      if (status !== 'cancelled') return notFound('runsheet');
      return conflict(`${words} was cancelled: its tasks can no longer be reported`);
  }
}

/**
 * Asks whether `move` is legal for the runsheet as it is: `move` (make it), `again` (a retry: answer as it stands),
 * or throws the refusal. `driverId`: the driver an assignment names (the same driver's hold is a retry).
 */
export function askRunsheet(move: RunsheetMove, runsheet: RunsheetFacts, driverId?: string): 'move' | 'again' {
  const machine = RUNSHEET_MOVES[move];
  if (machine.from.includes(runsheet.status)) return 'move';
  const retry = move !== 'assign' || runsheet.assigned_driver?.id === driverId;
  if (machine.again.includes(runsheet.status) && retry) return 'again';
  throw runsheetRefusal(move, runsheet);
}

// ----- the task (contract 4.8) -----

/**
 * The task machine: from which statuses each event is legal and the status it leaves (`arrived` changes none).
 * `delivered` and `failed` end a task.
 */
export const TASK_MOVES: Record<TaskEventType, Move<TaskStatus>> = {
  arrived: { from: ['pending', 'picked_up'], to: 'unchanged', causes: ['runsheet_started'] },
  picked_up: { from: ['pending'], to: 'picked_up', causes: ['runsheet_started'] },
  delivered: { from: ['picked_up'], to: 'delivered', causes: ['runsheet_started', 'task_finished'] },
  failed: { from: ['pending', 'picked_up'], to: 'failed', causes: ['runsheet_started', 'task_finished'] },
};

export const isFinished = (status: TaskStatus) => status === 'delivered' || status === 'failed';

/** The status an event leaves a task in, or undefined when the move is illegal from `status`. */
export function nextStatus(status: TaskStatus, type: TaskEventType): TaskStatus | undefined {
  const move = TASK_MOVES[type];
  if (!move.from.includes(status)) return undefined;
  return move.to === 'unchanged' ? status : move.to;
}

const TASK_STATUS_WORDS: Record<TaskStatus, string> = {
  pending: 'pending',
  picked_up: 'picked up',
  delivered: 'delivered',
  failed: 'reported failed',
};
const TASK_EVENT_WORDS: Record<TaskEventType, string> = {
  arrived: 'reported as arrived',
  picked_up: 'picked up',
  delivered: 'delivered',
  failed: 'reported failed',
};

/** The task as its refusal names it (`task_ref`, else its id) and its progress. */
export interface TaskFacts {
  words: string;
  status: TaskStatus;
  timeline: readonly { type: TaskEventType; status: TaskStatus; happened_at_utc: string }[];
}

/** The 409 of an illegal task event, in words that say what happened ("task T-17 was delivered at …"). */
export function taskRefusal(task: TaskFacts, type: TaskEventType): DomainError {
  const last = [...task.timeline].reverse().find((e) => e.status === task.status && e.type !== 'arrived');
  if (task.status === 'pending') {
    return conflict(
      `${task.words} has not been picked up yet: it cannot be ${TASK_EVENT_WORDS[type]} before its pickup`,
    );
  }
  const when = last ? ` at ${last.happened_at_utc}` : '';
  const again = task.status === 'picked_up' && type === 'picked_up' ? ' again' : ' now';
  return conflict(
    `${task.words} was ${TASK_STATUS_WORDS[task.status]}${when}; it cannot be ${TASK_EVENT_WORDS[type]}${again}`,
  );
}
