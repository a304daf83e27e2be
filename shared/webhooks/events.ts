/**
 * What a partner's webhook may carry (contract 4.2): every event the service sends to partners, with the scope that
 * reads the same facts through the API, and the fields of it that are a driver's position (`locations:read`, as
 * L2–L4 are). One list: the fan-out (`publishPartnerEvent`) and the delivery worker ask `eventForPartner` with the
 * partner's scopes as read then, and test/unit/webhook-events.test.ts holds docs/webhooks.md's table to it.
 *
 * An event whose scope the partner lacks is withheld whole; a position is stripped (its fields left out) from an
 * event the partner may otherwise read, since the event without it is still what the partner's API calls show.
 */
import type { Scope } from '#shared/auth/roles';

export interface PartnerEventRule {
  /** The scope a partner needs to receive the event; null: sent to one partner on request, whatever its scopes. */
  scope: Scope | null;
  /** Fields of the event's `data` that are a driver's position: left out unless the partner holds `locations:read`. */
  positions?: readonly string[];
}

const imports: PartnerEventRule = { scope: 'imports' };
const plannings: PartnerEventRule = { scope: 'plannings' };
/** A driver's report (X20) carries where the app was when it sent it. */
const taskEvent: PartnerEventRule = { scope: 'plannings', positions: ['latitude', 'longitude'] };

export const PARTNER_EVENTS = {
  'import.completed': imports,
  'import.failed': imports,
  'planning_job.completed': plannings,
  'planning_job.failed': plannings,
  'planning_job.cancelled': plannings,
  'pair.accepted': plannings,
  'pair.assigned': plannings,
  'pair.rejected': plannings,
  'pair.withdrawn': plannings,
  'runsheet.unassigned': plannings,
  'runsheet.cancelled': plannings,
  'runsheet.completed': plannings,
  'task.arrived': taskEvent,
  'task.picked_up': taskEvent,
  'task.delivered': taskEvent,
  'task.failed': taskEvent,
  // A stop at risk and back on time (contract 4.11): the task, its stop's window and ETA; no position.
  'task.late_risk': plannings,
  'task.back_on_time': plannings,
  'route_build.completed': plannings,
  'route_build.failed': plannings,
  'webhook.test': { scope: null },
} as const satisfies Record<string, PartnerEventRule>;

export type PartnerEventType = keyof typeof PARTNER_EVENTS;

const isPartnerEvent = (type: string): type is PartnerEventType => Object.hasOwn(PARTNER_EVENTS, type);

/**
 * The event's `data` as a partner holding `scopes` may receive it, or undefined when it may not receive it at all
 * (its scope missing, or a type this list does not name: nothing is sent that was not decided here).
 */
export function eventForPartner(type: string, data: unknown, scopes: readonly Scope[]): unknown {
  if (!isPartnerEvent(type)) return undefined;
  const rule: PartnerEventRule = PARTNER_EVENTS[type];
  if (rule.scope && !scopes.includes(rule.scope)) return undefined;
  if (!rule.positions || scopes.includes('locations:read') || typeof data !== 'object' || data === null) return data;
  const positions = rule.positions;
  return Object.fromEntries(Object.entries(data).filter(([field]) => !positions.includes(field)));
}
