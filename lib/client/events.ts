/**
 * What the service sends over its WebSocket (contract 4.3; docs/realtime.md): the frames, and the events a driver's
 * app and a dispatcher's screen hear, with their `data`. Every event frame carries an `id` that is the same on every
 * redelivery of that event: keep the ids seen and drop a repeat.
 */
import type { components } from './events-schema.ts';

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

type EventSchemas = components['schemas'];

/**
 * The events of each channel kind, generated (`npm run client`, `events-schema.ts`) from the definitions the
 * service publishes with (`shared/notifications/events.ts`); the e2e tests check every frame they receive against
 * the same definitions.
 */
/** On `user.<own id>`: what a driver hears about their own offers and runsheets. */
export type DriverEvents = EventSchemas['DriverEvents'];

/** On `org.<id>` (and SysAdmin's `drivers.freelance`): what a dispatcher's screen hears about the drivers. */
export type OrgEvents = EventSchemas['OrgEvents'];

/** On `planning.<id>`: what a dispatcher's screen hears about a planning's offers, job, route builds and tasks. */
export type PlanningEvents = EventSchemas['PlanningEvents'];

/** A driver's position as `org.<id>` tells it: L2's `location`, less what only a read of one driver carries. */
export type DriverPosition = OrgEvents['driver.location']['drivers'][number];

/** A route build's end, as `planning.<id>` and the partner webhooks tell it. */
export type RouteBuildEnd = PlanningEvents['route_build.completed'];

/** A task event a driver reported (X20), as `planning.<id>` and the partner webhooks tell it (docs/webhooks.md). */
export type TaskReport = PlanningEvents['task.delivered'];

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
