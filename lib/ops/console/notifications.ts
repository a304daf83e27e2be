/** The "Latest events" list: the caller's notification log (N2) and the live events as they come, newest first. */

import { api } from './api.ts';
import { REASONS } from './derive.ts';
import { $, text } from './dom.ts';
import { type Answer, driverName, plannings, roles } from './state.ts';

export function notify(what: string, about: string, when: string): void {
  const item = text('li', '');
  item.append(
    text('time', `${new Date(when).toLocaleTimeString()} `),
    text('span', what + (about ? ` · ${about}` : '')),
  );
  $('notifications').prepend(item);
  while ($('notifications').children.length > 30) $('notifications').lastChild?.remove();
}

export async function loadNotifications(): Promise<void> {
  // The caller's own notification log (N2); the organisation's live events join it as they come. A role whose log
  // is not open to it just sees the live events.
  if (!roles().some((r) => r === 'SysAdmin' || r === 'Merchant')) return;
  try {
    const list = await api<Answer<'/v1/notifications', 'get'>>('/v1/notifications?limit=10');
    for (const n of list.notifications.reverse()) notify(n.event_type || 'notification', '', n.created_at);
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
  return parts.length ? parts.join(' · ') : frame.channel;
}
