/**
 * Live ETAs (contract 4.11, issue 52 item 1): when each stop still to do of a runsheet under way will start, reckoned
 * from its driver's last position along the remaining stops in order, driven with the runsheet's travel model,
 * waiting where a window has not opened and spending each stop's service time. A stop's ETA is when its service
 * starts (4.10's `start_utc`, which `planned_pickup_utc`/`planned_dropoff_utc` are), so the two read side by side;
 * it is *at risk* when that lies after its window's end, by `late_by_s`.
 *
 * Pure: the runsheet, its tasks' statuses, the driver's last fix and the clock's reading come in, the members X22
 * shows go out. X22 (planning/execution.ts) computes them each time it is read, from what it reads anyway and the
 * driver's fix: so they are never behind a fix or a task event, and move with the clock while the driver stands still.
 */
import type { TaskStatus } from '#shared/planning/lifecycle';
import { ROUTE_DEFAULTS } from '#shared/routing/schemas';
import { type Point, straightLineLeg, type TravelSettings } from '#shared/routing/travel';

/** A fix older than this (by the service's clock, its `server_time`) is no position to reckon from (4.11). */
export const FIX_MAX_AGE_MS = 10 * 60 * 1000;

/** 4.10's travel model for a runsheet that no build made (or one built before builds kept theirs on it). */
export const DEFAULT_TRAVEL: TravelSettings = {
  speed_kmh: ROUTE_DEFAULTS.speed_kmh,
  detour_factor: ROUTE_DEFAULTS.detour_factor,
};

export type StopKind = 'pickup' | 'dropoff';

/** A stop still to do, as the reckoning needs it. */
export interface EtaStop {
  taskId: string;
  kind: StopKind;
  /** Undefined: the address has no coordinates, and neither this stop nor any after it can be reckoned. */
  point: Point | undefined;
  opensMs: number | undefined;
  closesMs: number | undefined;
  serviceS: number;
  /**
   * A built stop's planned leg: the stop its plan drove from (the one before it in `stops[]`) and the seconds that
   * leg took (its arrival less that stop's departure). Only a road model's ETAs take it (`reckonRunsheet`).
   */
  plannedLeg?: { from: string; seconds: number };
}

export interface StopEta {
  taskId: string;
  kind: StopKind;
  /** When the stop's service starts (epoch ms); null when it cannot be reckoned. */
  etaMs: number | null;
  /** Seconds past the window's end, rounded up (0 on time); null when the ETA is. */
  lateByS: number | null;
}

type Task = Record<string, unknown> & { id: string };
/** A task status as the runsheet's progress items say it (`pending` when none is stored). */
type StatusOf = (taskId: string) => TaskStatus;

/** Contract 4.11: the pickup is done once its task is picked up; both stops once it is delivered or failed. */
export function isStopDone(kind: StopKind, status: TaskStatus): boolean {
  if (status === 'delivered' || status === 'failed') return true;
  return kind === 'pickup' && status === 'picked_up';
}

const pointOf = (value: unknown): Point | undefined => {
  const p = value as { latitude?: unknown; longitude?: unknown } | null | undefined;
  return typeof p?.latitude === 'number' && typeof p.longitude === 'number'
    ? { latitude: p.latitude, longitude: p.longitude }
    : undefined;
};
const msOf = (iso: unknown) =>
  typeof iso === 'string' && !Number.isNaN(Date.parse(iso)) ? Date.parse(iso) : undefined;

/** A stop's name in a plan: its task and kind. */
const stopName = (taskId: string, kind: string) => `${taskId}:${kind}`;

const SIDE = {
  pickup: { address: 'from_address', window: 'from_time_window', service: 'from_service_s' },
  dropoff: { address: 'to_address', window: 'to_time_window', service: 'to_service_s' },
} as const;

/** A task's stop: where (a built stop's own coordinates, else its address's), its window, its service time. */
function stopOf(task: Task, kind: StopKind, built?: Record<string, unknown>): EtaStop {
  const side = SIDE[kind];
  const window = task[side.window] as { start_time_utc?: unknown; end_time_utc?: unknown } | null | undefined;
  const service = task[side.service];
  return {
    taskId: task.id,
    kind,
    point: pointOf(built) ?? pointOf(task[side.address]),
    opensMs: msOf(window?.start_time_utc),
    closesMs: msOf(window?.end_time_utc),
    serviceS:
      typeof service === 'number' ? service : kind === 'pickup' ? ROUTE_DEFAULTS.pickup_s : ROUTE_DEFAULTS.dropoff_s,
  };
}

/**
 * The stops still to do, in the order the driver takes them: a built runsheet's `stops[]` (its planned order), any
 * other runsheet's tasks in order, each task's pickup before its drop-off; less the stops done. A task a built
 * runsheet holds but its `stops[]` does not name (none should) follows in task order.
 */
export function remainingStops(
  tasks: readonly Task[],
  built: readonly Record<string, unknown>[] | undefined,
  statusOf: StatusOf,
): EtaStop[] {
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const named = new Set<string>();
  const ordered: EtaStop[] = [];
  let previous: Record<string, unknown> | undefined;
  for (const stop of built ?? []) {
    const task = byId.get(String(stop['task_id']));
    const kind = stop['kind'];
    const before = previous;
    previous = stop;
    if (!task || (kind !== 'pickup' && kind !== 'dropoff')) continue;
    named.add(task.id);
    const leftMs = msOf(before?.['departure_utc']);
    const arrivedMs = msOf(stop['arrival_utc']);
    ordered.push({
      ...stopOf(task, kind, stop),
      ...(before && leftMs !== undefined && arrivedMs !== undefined
        ? {
            plannedLeg: {
              from: stopName(String(before['task_id']), String(before['kind'])),
              seconds: (arrivedMs - leftMs) / 1000,
            },
          }
        : {}),
    });
  }
  for (const task of tasks) if (!named.has(task.id)) ordered.push(stopOf(task, 'pickup'), stopOf(task, 'dropoff'));
  return ordered.filter((stop) => !isStopDone(stop.kind, statusOf(stop.taskId)));
}

/**
 * Each stop's ETA: from `from` at `startMs`, each leg driven as `legS` says, waiting for a window to open, spending
 * the stop's service time. A stop without coordinates ends the reckoning: it and every stop after it are null.
 */
export function reckonStops(
  from: Point,
  startMs: number,
  stops: readonly EtaStop[],
  legS: (a: Point, b: Point, stop: EtaStop, previous: EtaStop | undefined) => number,
): StopEta[] {
  let at: Point | undefined = from;
  let clockMs = startMs;
  return stops.map((stop, i) => {
    if (!at || !stop.point) {
      at = undefined;
      return { taskId: stop.taskId, kind: stop.kind, etaMs: null, lateByS: null };
    }
    // Whole milliseconds, as ISO times hold them: a stop whose ETA is after its window's end by any of them is late.
    const arrivalMs = clockMs + Math.round(legS(at, stop.point, stop, stops[i - 1]) * 1000);
    const etaMs = Math.max(arrivalMs, stop.opensMs ?? arrivalMs);
    const lateByS = stop.closesMs === undefined ? 0 : Math.max(0, Math.ceil((etaMs - stop.closesMs) / 1000));
    clockMs = etaMs + stop.serviceS * 1000;
    at = stop.point;
    return { taskId: stop.taskId, kind: stop.kind, etaMs, lateByS };
  });
}

/** The driver's last fix as the locations table keeps it (4.4): where, and when the service stored it. */
export interface LastFix extends Point {
  server_time: string;
}

/** A task's ETA members in X22. */
export interface TaskEtas {
  eta_pickup_utc: string | null;
  eta_dropoff_utc: string | null;
  late_by_s: number | null;
}

/** The runsheet's ETA members in X22. */
export interface RunsheetEtaMembers {
  eta_updated_at: string | null;
  delay_s: number | null;
  eta_reason: 'no_recent_position' | null;
}

export interface RunsheetEtas {
  runsheet: RunsheetEtaMembers;
  taskEtas: (taskId: string) => TaskEtas;
}

/** What `runsheetEtas` and the risk check (late-risk.ts) reckon from: a runsheet, its tasks' statuses, a fix, now. */
export interface EtaInput {
  tasks: readonly Task[];
  stops?: readonly Record<string, unknown>[] | undefined;
  /** The runsheet's travel model: its build's settings, and `model` when the build drove road travel times. */
  travel?: (TravelSettings & { model?: string }) | undefined;
  statusOf: StatusOf;
  fix: LastFix | undefined;
  nowMs: number;
}

/** A stop still to do with its ETA: the stop as `remainingStops` says it, `reckonStops`' answer beside it. */
export type ReckonedStop = EtaStop & StopEta;

/**
 * The remaining stops of a runsheet with their ETAs, from the fix at the later of its time and `nowMs` (`startMs`);
 * undefined without a fix at most FIX_MAX_AGE_MS old (no position to reckon from).
 */
export function reckonRunsheet(input: EtaInput): { startMs: number; stops: ReckonedStop[] } | undefined {
  const fixMs = input.fix ? Date.parse(input.fix.server_time) : Number.NaN;
  if (!input.fix || !(input.nowMs - fixMs <= FIX_MAX_AGE_MS)) return undefined;
  const travel = input.travel ?? DEFAULT_TRAVEL;
  const startMs = Math.max(fixMs, input.nowMs);
  const remaining = remainingStops(input.tasks, input.stops, input.statusOf);
  const reckoned = reckonStops(input.fix, startMs, remaining, (a, b, stop, previous) =>
    // A road model's leg between two stops the plan drove one after the other is the plan's own (the road matrix's
    // time); the leg from the driver's position, and any other, is the straight line with the build's settings.
    input.travel?.model === 'amazon-location' &&
    previous &&
    stop.plannedLeg?.from === stopName(previous.taskId, previous.kind)
      ? stop.plannedLeg.seconds
      : straightLineLeg(travel, a, b).seconds,
  );
  return { startMs, stops: remaining.map((stop, i) => ({ ...stop, ...reckoned[i]! })) };
}

/**
 * The ETAs of a runsheet `assigned` or `in_progress` (the caller asks only for those) whose driver's last fix is
 * `fix`: from its position at the later of its time and `nowMs`, along the remaining stops, with `travel` (the
 * runsheet's build's; 4.10's default otherwise). Without a fix at most FIX_MAX_AGE_MS old every ETA is null and the
 * runsheet says `no_recent_position`. A task with nothing left to do has null ETAs and `late_by_s` 0.
 */
export function runsheetEtas(input: EtaInput): RunsheetEtas {
  const reckoning = reckonRunsheet(input);
  if (!reckoning) {
    const unknown: TaskEtas = { eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: null };
    return {
      runsheet: { eta_updated_at: null, delay_s: null, eta_reason: 'no_recent_position' },
      taskEtas: () => unknown,
    };
  }
  const { startMs, stops: reckoned } = reckoning;
  const byTask = new Map<string, TaskEtas>();
  for (const stop of reckoned) {
    const etas = byTask.get(stop.taskId) ?? { eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: 0 };
    etas[stop.kind === 'pickup' ? 'eta_pickup_utc' : 'eta_dropoff_utc'] =
      stop.etaMs === null ? null : new Date(stop.etaMs).toISOString();
    etas.late_by_s = etas.late_by_s === null || stop.lateByS === null ? null : Math.max(etas.late_by_s, stop.lateByS);
    byTask.set(stop.taskId, etas);
  }
  const done: TaskEtas = { eta_pickup_utc: null, eta_dropoff_utc: null, late_by_s: 0 };
  return {
    runsheet: {
      eta_updated_at: new Date(startMs).toISOString(),
      delay_s: Math.max(0, ...reckoned.map((stop) => stop.lateByS ?? 0)),
      eta_reason: null,
    },
    taskEtas: (taskId) => byTask.get(taskId) ?? done,
  };
}
