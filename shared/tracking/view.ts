/**
 * What a tracking link shows (contract 4.11, X29) and until when it works: a pure decision over what links.ts reads.
 * Only 4.11's members leave here: the organisation's name, the task's `task_ref`, its status, the drop-off's window,
 * its ETA to the minute, the drop-off's city, the driver's first name, and the driver's position (3 decimals) only
 * while the drop-off is the runsheet's next stop. Nothing of another task, stop, proof or address.
 */
import type { RunsheetStatusView } from '#shared/planning/dispatch-records';
import type { LastFix } from '#shared/planning/etas';
import type { TimelineEntry } from '#shared/planning/execution';
import type { TaskStatus } from '#shared/planning/lifecycle';
import type { FAILURE_REASONS } from '#shared/planning/schemas';
import type { TrackingStatus } from '#shared/tracking/schemas';

/** A link works 7 days after it was made, and 24 hours after its task was delivered, failed or cancelled. */
export const LINK_LIFETIME_MS = 7 * 24 * 3600 * 1000;
export const AFTER_FINISH_MS = 24 * 3600 * 1000;

const MINUTE_MS = 60_000;

type Stored = Record<string, unknown>;

/** Where the task is in its runsheet, as links.ts reads it; absent for a task in no runsheet. */
export interface Placement {
  runsheet: RunsheetStatusView;
  task: { status: TaskStatus; timeline: readonly TimelineEntry[] };
  /** Whether the runsheet's next stop to do (etas.ts's order) is this task's drop-off. */
  dropoffIsNext: boolean;
  /** The drop-off's ETA (ISO, to the millisecond) while the runsheet is under way and its driver's fix is recent. */
  dropoffEta: string | null;
  fix: LastFix | undefined;
}

export interface TrackingFacts {
  organisationName: string;
  /** The imported task as stored (shared/imports/tasks.ts). */
  task: Stored & { id: string };
  placement: Placement | undefined;
  madeAtMs: number;
}

const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
const toMinute = (iso: string) => new Date(Math.round(Date.parse(iso) / MINUTE_MS) * MINUTE_MS).toISOString();
const stringOr = (value: unknown) => (typeof value === 'string' ? value : null);

/** The task's status for its recipient, and since when it is over (delivered, failed or cancelled), in ms. */
function statusOf(placement: Placement | undefined): { status: TrackingStatus; finishedMs?: number } {
  if (!placement) return { status: 'scheduled' };
  const { task, runsheet } = placement;
  if (task.status === 'delivered' || task.status === 'failed') {
    const event = task.timeline.findLast((e) => e.type === task.status);
    return { status: task.status, finishedMs: Date.parse(event?.happened_at_utc ?? '') || 0 };
  }
  if (runsheet.status === 'cancelled') return { status: 'cancelled', finishedMs: Date.parse(runsheet.cancelled_at) };
  const underWay = runsheet.status === 'assigned' || runsheet.status === 'in_progress';
  return { status: underWay && placement.dropoffIsNext ? 'on_the_way' : 'scheduled' };
}

/** When the link stops working (ms): 7 days after it was made, or 24 hours after its task was over if sooner. */
export function linkExpiresMs(facts: Pick<TrackingFacts, 'placement' | 'madeAtMs'>): number {
  const { finishedMs } = statusOf(facts.placement);
  return Math.min(
    facts.madeAtMs + LINK_LIFETIME_MS,
    finishedMs === undefined ? Infinity : finishedMs + AFTER_FINISH_MS,
  );
}

/** X29's `tracking`. */
export function trackingView(facts: TrackingFacts) {
  const { task, placement } = facts;
  const { status } = statusOf(placement);
  const window = task['to_time_window'] as { start_time_utc?: unknown; end_time_utc?: unknown } | null | undefined;
  const address = task['to_address'] as { city?: unknown } | null | undefined;
  const driver = placement && 'assigned_driver' in placement.runsheet ? placement.runsheet.assigned_driver : undefined;
  const live = status === 'scheduled' || status === 'on_the_way';
  const fix = status === 'on_the_way' ? placement?.fix : undefined;
  const failure = status === 'failed' ? placement?.task.timeline.findLast((e) => e.type === 'failed') : undefined;
  return {
    organisation_name: facts.organisationName,
    task_ref: String(task['task_ref'] ?? ''),
    status,
    failure_reason: (failure?.failure_reason ?? null) as (typeof FAILURE_REASONS)[number] | null,
    window: window
      ? { start_time_utc: stringOr(window.start_time_utc), end_time_utc: stringOr(window.end_time_utc) }
      : null,
    eta_utc: live && placement?.dropoffEta ? toMinute(placement.dropoffEta) : null,
    city: stringOr(address?.city),
    driver_first_name: driver?.name.trim().split(/\s+/)[0] || null,
    driver_position: fix ? { latitude: round(fix.latitude, 3), longitude: round(fix.longitude, 3) } : null,
  };
}
