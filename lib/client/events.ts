/**
 * What the service sends over its WebSocket (contract 4.3; docs/realtime.md): the frames, and the events a driver's
 * app and a dispatcher's screen hear, with their `data`. Every event frame carries an `id` that is the same on every
 * redelivery of that event: keep the ids seen and drop a repeat.
 */
import type { operations } from './schema.ts';

/** A frame the service sends. */
export type ServerFrame =
  | { type: 'subscribed'; channels: string[] }
  | { type: 'pong' }
  | { type: 'error'; code: string; channel?: string; channels?: string[]; message?: string }
  | { type: 'event'; channel: string; name: string; data: unknown; id: string };

/** A frame the client sends: join or leave channels, or keep an idle connection open. */
export type ClientFrame =
  | { action: 'subscribe'; channels: string[] }
  | { action: 'unsubscribe'; channels: string[] }
  | { action: 'ping' };

/** On `user.<own id>`: what a driver hears about their own offers and runsheets. */
export interface DriverEvents {
  /** A runsheet is offered to them (the job's wave 1, a later wave, or a re-offer). */
  'offer.new': { pair_id: string; planning_id: string; runsheet_id: string; expired_time: string | null };
  /** The system closed their open offer: `expired`, `assigned_to_other_driver`, `driver_at_capacity`, … */
  'offer.closed': { pair_id: string; planning_id: string; runsheet_id: string; reason: string | null };
  /** Their accept won the runsheet. */
  'runsheet.assigned': { pair_id: string; planning_id: string; runsheet_id: string };
}

/** A driver's position as `org.<id>` tells it: L2's `location`, less what only a read of one driver carries. */
export type DriverPosition = Pick<
  operations['L2']['responses'][200]['content']['application/json']['location'],
  'user_id' | 'latitude' | 'longitude' | 'altitude' | 'client_time_utc' | 'server_time' | 'version'
>;

/** On `org.<id>` (and SysAdmin's `drivers.freelance`): what a dispatcher's screen hears about the drivers. */
export interface OrgEvents {
  /** The drivers that moved in one window, each once (its newest version). */
  'driver.location': { drivers: DriverPosition[] };
}

/** A pair's move as `planning.<id>` tells it. */
interface PairMove {
  pair_id: string;
  runsheet_id: string;
  driver_id: string;
  current_state: string;
}

/** On `planning.<id>`: what a dispatcher's screen hears about a planning's offers and job. */
export interface PlanningEvents {
  'pair.broadcast': {
    pair_id: string;
    runsheet_id: string;
    driver_id: string;
    expired_time: string | null;
    wave?: number;
  };
  'pair.accepted': PairMove;
  /** The dispatcher assigned the runsheet (X16). */
  'pair.assigned': PairMove;
  /** The driver declined (`reason` null) or the system closed the offer (`reason` says why). */
  'pair.rejected': PairMove & { reason: string | null };
  /** The driver gave an accepted runsheet back (X19). */
  'pair.withdrawn': PairMove & { reason: string | null };
  'planning_job.status': { planning_job_id: string; status: string };
  'runsheet.unassigned': { planning_id: string; runsheet_id: string; unassigned_reason: unknown };
  /** A route build (X23) ended: its summary once completed, its error once failed (contract 4.10). */
  'route_build.completed': RouteBuildEnd;
  'route_build.failed': RouteBuildEnd;
  'task.arrived': TaskReport;
  'task.picked_up': TaskReport;
  'task.delivered': TaskReport;
  'task.failed': TaskReport;
  /** The runsheet's last task was delivered or failed (X20). */
  'runsheet.completed': {
    planning_id: string;
    runsheet_id: string;
    driver: { id: string; name: string };
    completed_at: string;
    tasks_total: number;
    tasks_delivered: number;
    tasks_failed: number;
  };
}

/** A route build's end, as `planning.<id>` and the partner webhooks tell it. */
export interface RouteBuildEnd {
  planning_id: string;
  route_build_id: string;
  status: 'completed' | 'failed';
  dry_run: boolean;
  summary?: {
    tasks: number;
    planned: number;
    unplanned: number;
    vehicles_used: number;
    total_distance_m: number;
    total_duration_s: number;
    solve_ms: number;
    stopped: 'time_limit' | 'converged';
  };
  error?: { code: string; detail: string };
}

/** A task event a driver reported (X20), as `planning.<id>` and the partner webhooks tell it (docs/webhooks.md). */
export interface TaskReport {
  planning_id: string;
  runsheet_id: string;
  task_id: string;
  task_ref?: string | null;
  driver: { id: string; name: string };
  type: 'arrived' | 'picked_up' | 'delivered' | 'failed';
  /** The task's status after the event. */
  status: 'pending' | 'picked_up' | 'delivered' | 'failed';
  happened_at_utc: string;
  latitude: number | null;
  longitude: number | null;
  failure_reason: string | null;
  note?: string | null;
  recipient_name?: string | null;
  proof_ids?: string[];
}

/** An event frame narrowed to a known event name and its `data`. */
export type EventFrame<Events, Name extends keyof Events & string = keyof Events & string> = {
  [N in Name]: { type: 'event'; channel: string; name: N; data: Events[N]; id: string };
}[Name];

/** The frame as one of `Events` when its name is one of them (unknown names are left to the caller). */
export function isEvent<Events, Name extends keyof Events & string>(
  frame: ServerFrame,
  name: Name,
): frame is EventFrame<Events, Name> {
  return frame.type === 'event' && frame.name === name;
}
