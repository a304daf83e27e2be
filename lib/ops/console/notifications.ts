/** The "Latest events" list: the caller's notification log (N2) and the live events as they come, newest first. */

import { api } from './api.ts';
import { REASONS } from './derive.ts';
import { $, clockTime, text } from './dom.ts';
import { type Answer, driverName, plannings, roles } from './state.ts';

/** An event's name as a dispatcher reads it (issue 46.6); a name not listed here (an N1 event's own), as sent. */
const EVENT_WORDS: Record<string, string> = {
  'pair.broadcast': 'offered',
  'pair.accepted': 'offer accepted',
  'pair.rejected': 'offer refused',
  'pair.withdrawn': 'offer withdrawn',
  'pair.assigned': 'assigned by a dispatcher',
  'runsheet.assigned': 'runsheet assigned',
  'runsheet.unassigned': 'runsheet unassigned',
  'runsheet.cancelled': 'runsheet cancelled',
  'runsheet.completed': 'runsheet completed',
  'task.arrived': 'driver arrived',
  'task.picked_up': 'task picked up',
  'task.delivered': 'task delivered',
  'task.failed': 'task failed',
  'planning_job.status': 'job moved on',
  'route_build.completed': 'routes built',
  'route_build.failed': 'route build failed',
};
export const eventWords = (name: string) => EVENT_WORDS[name] || name;

/** An offer's step in its pair record's history, in words (the reason says how a refusal ended). */
const STEP_WORDS: Record<string, string> = {
  broadcast: 'offered',
  accepted: 'offer accepted',
  rejected: 'offer declined',
  withdrawn: 'offer withdrawn',
  assigned: 'assigned by a dispatcher',
};

/** What a planning's offers did before sign-in, from its pair records, oldest first into the list (issue 46.6). */
export function notifyHistory(
  planningId: string,
  records: { pair: { runsheet: { id: string }; driver: { id: string } }; statuses: HistoryStep[] }[],
): void {
  const runsheets = plannings.get(planningId)?.runsheets;
  const steps = records.flatMap((record) =>
    record.statuses
      .filter((step) => step.happened_at_utc && STEP_WORDS[String(step.action)])
      .map((step) => ({ record, step, at: String(step.happened_at_utc) })),
  );
  steps.sort((a, b) => a.at.localeCompare(b.at));
  for (const { record, step, at } of steps.slice(-15)) {
    const refused = step.action === 'rejected' && step.reason && step.reason !== 'declined_by_driver';
    const what = refused ? 'offer closed' : STEP_WORDS[String(step.action)] || String(step.action);
    const runsheet = runsheets?.get(record.pair.runsheet.id);
    const about = [runsheet?.name || record.pair.runsheet.id, driverName(record.pair.driver.id)];
    if (refused && step.reason) about.push(REASONS[step.reason] || step.reason.replace(/_/g, ' '));
    notify(what, about.join(' · '), at);
  }
}
interface HistoryStep {
  action?: string | null;
  reason?: string | null;
  happened_at_utc?: string | null;
}

export function notify(what: string, about: string, when: string): void {
  const item = text('li', '');
  item.append(text('time', `${clockTime(when)} `), text('span', what + (about ? ` · ${about}` : '')));
  $('notifications').prepend(item);
  while ($('notifications').children.length > 30) $('notifications').lastChild?.remove();
}

export async function loadNotifications(): Promise<void> {
  // The caller's own notification log (N2); the organisation's live events join it as they come. A role whose log
  // is not open to it just sees the live events.
  if (!roles().some((r) => r === 'SysAdmin' || r === 'Merchant')) return;
  try {
    const list = await api<Answer<'/v1/notifications', 'get'>>('/v1/notifications?limit=10');
    for (const n of list.notifications.reverse()) notify(eventWords(n.event_type || 'notification'), '', n.created_at);
  } catch {}
}

/** What an event's `data` may name. */
interface EventNames {
  runsheet_id?: string;
  task_ref?: string | null;
  task_id?: string;
  driver_id?: string;
  driver?: { id: string; name: string };
  reason?: string | null;
  failure_reason?: string | null;
  /** A route build's (`route_build.completed`): what it planned, and when its dry run was applied (X31). */
  summary?: { planned: number; unplanned: number };
  applied_at?: string;
}

/** A line a dispatcher reads for an event: the runsheet's and the driver's names where it has them. */
export function describe(frame: { channel: string; data: unknown }): string {
  const data = (frame.data || {}) as EventNames;
  const planningId = frame.channel.startsWith('planning.') ? frame.channel.slice('planning.'.length) : null;
  const runsheet = planningId && data.runsheet_id ? plannings.get(planningId)?.runsheets.get(data.runsheet_id) : null;
  const parts: string[] = [];
  if (data.runsheet_id) parts.push(runsheet?.name || data.runsheet_id);
  if (data.task_ref || data.task_id) parts.push(`task ${data.task_ref || data.task_id}`);
  const driverId = data.driver_id || data.driver?.id;
  if (driverId) parts.push(data.driver?.name || driverName(driverId));
  if (data.reason) parts.push(REASONS[data.reason] || data.reason);
  if (data.failure_reason) parts.push(data.failure_reason.replace(/_/g, ' '));
  if (data.summary) parts.push(`${data.summary.planned} planned, ${data.summary.unplanned} left out`);
  if (data.applied_at) parts.push('dry run applied');
  // An event of the planning as a whole (a route build): the planning's name, not its channel.
  const planningName = planningId ? plannings.get(planningId)?.name : undefined;
  if (planningName && !data.runsheet_id) parts.unshift(planningName);
  return parts.length ? parts.join(' · ') : frame.channel;
}
