/**
 * The events the service sends over its WebSocket (contract 4.3; docs/realtime.md), by channel: the one definition of
 * each event's `data`. `npm run client` generates the client's event types from these (`lib/client/events-schema.ts`,
 * read by `lib/client/events.ts`); the service publishes them through `publishEvent`/`publishEvents`
 * (`shared/notifications/realtime.ts`), whose `data` the compiler checks against these; and the e2e tests check every
 * event frame they receive against them (test/support/sockets.ts). An event added or changed here changes all three.
 */
import * as v from 'valibot';
import { EXCLUSION_RULES } from '#shared/planning/eligibility';
import { TASK_EVENT_TYPES } from '#shared/planning/schemas';
import { buildResult } from '#shared/routing/schemas';

const id = v.string();
const nullableString = v.nullable(v.string());

/** The reason a system closure carries (`expired`, `assigned_to_other_driver`, `driver_at_capacity`, …). */
const closeReason = v.pipe(
  v.nullable(v.string()),
  v.description(
    'Why the offer closed: `declined_by_driver` for a driver’s decline (R7), else the system’s reason (`expired`, `assigned_to_other_driver`, `driver_at_capacity`, `runsheet_cancelled`, …).',
  ),
);

/** On `user.<own id>`: what a driver hears about their own offers and runsheets. */
export const DRIVER_EVENTS = {
  'offer.new': v.pipe(
    v.object({ pair_id: id, planning_id: id, runsheet_id: id, expired_time: nullableString }),
    v.description('A runsheet is offered to them (the job’s wave 1, a later wave, or a re-offer).'),
  ),
  'offer.closed': v.pipe(
    v.object({ pair_id: id, planning_id: id, runsheet_id: id, reason: closeReason }),
    v.description(
      'The system closed their open offer: `expired`, `assigned_to_other_driver`, `driver_at_capacity`, `runsheet_cancelled`, …',
    ),
  ),
  'runsheet.assigned': v.pipe(
    v.object({ pair_id: id, planning_id: id, runsheet_id: id }),
    v.description('Their accept won the runsheet, or a dispatcher assigned it to them (X16).'),
  ),
  'runsheet.cancelled': v.pipe(
    v.object({ pair_id: id, planning_id: id, runsheet_id: id, reason: nullableString }),
    v.description('A runsheet they held was taken out of dispatch (X18): stop working on it.'),
  ),
  'runsheet.updated': v.pipe(
    v.object({
      planning_id: id,
      runsheet_id: id,
      route_build_id: id,
      added: v.array(id),
      stops: v.array(v.object({ task_id: id, kind: v.picklist(['pickup', 'dropoff']) })),
    }),
    v.description(
      'Tasks were added to a runsheet they hold (X30): `added` names them, `stops` is the new order of the stops left (read X22 for the rest).',
    ),
  ),
};

/** A driver's position as `org.<id>` tells it (L2's `location`, less what only a read of one driver carries). */
const driverPosition = v.object({
  user_id: id,
  latitude: v.number(),
  longitude: v.number(),
  altitude: v.nullable(v.number()),
  client_time_utc: v.string(),
  server_time: v.string(),
  version: v.number(),
});

/** On `org.<id>` (and SysAdmin's `drivers.freelance`): what a dispatcher's screen hears about the drivers. */
export const ORG_EVENTS = {
  'driver.location': v.pipe(
    v.object({ drivers: v.array(driverPosition) }),
    v.description('The drivers that moved in one window, each once (its newest version).'),
  ),
};

const pairMove = { pair_id: id, runsheet_id: id, driver_id: id, current_state: v.string() };

const routeBuildEnd = v.pipe(
  v.object({
    planning_id: id,
    route_build_id: id,
    status: v.picklist(['completed', 'failed']),
    dry_run: v.boolean(),
    summary: v.optional(buildResult.entries.summary),
    error: v.optional(v.object({ code: v.string(), detail: v.string() })),
    applied_at: v.optional(v.string()),
  }),
  v.description(
    'A route build (X23) ended: its summary once completed, its error once failed (contract 4.10); a dry run applied ' +
      'by X31 is told once more, with `applied_at`.',
  ),
);

const driverRef = v.object({ id, name: v.string() });

const taskReport = v.pipe(
  v.object({
    planning_id: id,
    runsheet_id: id,
    task_id: id,
    task_ref: v.optional(nullableString),
    driver: driverRef,
    type: v.picklist(TASK_EVENT_TYPES),
    status: v.pipe(
      v.picklist(['pending', 'picked_up', 'delivered', 'failed']),
      v.description('The task’s status after the event.'),
    ),
    happened_at_utc: v.string(),
    latitude: v.nullable(v.number()),
    longitude: v.nullable(v.number()),
    failure_reason: nullableString,
    note: v.optional(nullableString),
    recipient_name: v.optional(nullableString),
    proof_ids: v.optional(v.array(v.string())),
  }),
  v.description('A task event a driver reported (X20), as the partner webhooks tell it too (docs/webhooks.md).'),
);

/** A stop's risk moving (contract 4.11): the same members both ways; `late_by_s` 0 once it is on time again. */
const stopRisk = (description: string) =>
  v.pipe(
    v.object({
      planning_id: id,
      runsheet_id: id,
      task_id: id,
      task_ref: v.optional(nullableString),
      driver: driverRef,
      stop_kind: v.picklist(['pickup', 'dropoff']),
      window_end_utc: v.pipe(nullableString, v.description('The end of the stop’s window.')),
      eta_utc: v.pipe(v.string(), v.description('When the stop is expected to start (X22’s ETA at the check).')),
      late_by_s: v.pipe(v.number(), v.description('Seconds past the window’s end (0 when on time).')),
    }),
    v.description(description),
  );

const count = v.number();

/** What a dispatch has come to (`dispatchCounts`), on an ended job's `planning_job.status`. */
const dispatchCounts = {
  runsheets: v.optional(
    v.object({ total: count, open: count, offered: count, assigned: count, unassigned: count, cancelled: count }),
  ),
  pairs: v.optional(v.object({ offered: count, open: count, won: count, closed: count })),
};

const offerCounts = v.object({ rejected: count, expired: count, closed: count });

const unassignedReason = v.object({
  code: v.picklist(['no_driver_accepted', 'no_eligible_driver']),
  detail: v.string(),
  waves: count,
  offers: offerCounts,
  not_asked: v.pipe(count, v.description('Eligible drivers never offered it because the waves ran out.')),
  excluded: v.object(
    Object.fromEntries(EXCLUSION_RULES.map((rule) => [rule, count])) as Record<
      (typeof EXCLUSION_RULES)[number],
      typeof count
    >,
  ),
});

/** On `planning.<id>`: what a dispatcher's screen hears about a planning's offers, job, builds and tasks. */
export const PLANNING_EVENTS = {
  'pair.broadcast': v.pipe(
    v.object({ pair_id: id, runsheet_id: id, driver_id: id, expired_time: nullableString, wave: v.optional(count) }),
    v.description('A runsheet was offered to a driver (`wave` when the planning job’s waves sent it).'),
  ),
  'pair.accepted': v.pipe(v.object(pairMove), v.description('The driver accepted the offer and won the runsheet.')),
  'pair.assigned': v.pipe(v.object(pairMove), v.description('The dispatcher assigned the runsheet (X16).')),
  'pair.rejected': v.pipe(
    v.object({ ...pairMove, reason: closeReason }),
    v.description('The driver declined (`reason` is `declined_by_driver`) or the system closed the offer.'),
  ),
  'pair.withdrawn': v.pipe(
    v.object({ ...pairMove, reason: nullableString }),
    v.description('The driver gave an accepted runsheet back (X19).'),
  ),
  'planning_job.status': v.pipe(
    v.object({ planning_job_id: id, status: v.string(), ...dispatchCounts }),
    v.description(
      'The planning job moved; an ended one (`completed`, `failed`, `cancelled`) carries its `runsheets` and `pairs` counts.',
    ),
  ),
  'runsheet.unassigned': v.pipe(
    v.object({ planning_id: id, runsheet_id: id, unassigned_reason: unassignedReason }),
    v.description('No driver took the runsheet after its last wave, or none was left to offer it to (contract 4.7).'),
  ),
  'runsheet.cancelled': v.pipe(
    v.object({ planning_id: id, runsheet_id: id, reason: nullableString }),
    v.description('The planner took the runsheet out of dispatch (X18); its open offers are closed.'),
  ),
  'route_build.completed': routeBuildEnd,
  'route_build.failed': routeBuildEnd,
  'task.arrived': taskReport,
  'task.picked_up': taskReport,
  'task.delivered': taskReport,
  'task.failed': taskReport,
  'task.late_risk': stopRisk(
    'A stop still to do became at risk: its ETA lies after its window’s end. Once, until it is on time again or done.',
  ),
  'task.back_on_time': stopRisk('A stop at risk is on time again (a stop done says nothing more: its task event did).'),
  'runsheet.completed': v.pipe(
    v.object({
      planning_id: id,
      runsheet_id: id,
      driver: driverRef,
      completed_at: v.string(),
      tasks_total: count,
      tasks_delivered: count,
      tasks_failed: count,
    }),
    v.description('The runsheet’s last task was delivered or failed (X20).'),
  ),
};

/** The events of each channel kind, as the client's generated types name them. */
export const CHANNEL_EVENTS = {
  DriverEvents: DRIVER_EVENTS,
  OrgEvents: ORG_EVENTS,
  PlanningEvents: PLANNING_EVENTS,
} as const;

/**
 * The kind of events a frame on `channel` carries (undefined for a channel of none), and whether that kind is all it
 * carries: `user.` and `org.` also carry what N1 and N5 push (any name), so only their declared names are theirs.
 */
export function channelKind(channel: string): { kind: keyof typeof CHANNEL_EVENTS; closed: boolean } | undefined {
  if (channel.startsWith('planning.')) return { kind: 'PlanningEvents', closed: true };
  if (channel.startsWith('user.')) return { kind: 'DriverEvents', closed: false };
  if (channel.startsWith('org.') || channel === 'drivers.freelance') return { kind: 'OrgEvents', closed: false };
  return undefined;
}

type Declared = typeof DRIVER_EVENTS | typeof ORG_EVENTS | typeof PLANNING_EVENTS;
/** An event name some channel kind declares. */
export type EventName = keyof typeof DRIVER_EVENTS | keyof typeof ORG_EVENTS | keyof typeof PLANNING_EVENTS;
/** The `data` of event `N` as declared (for a name two channel kinds share, either one's). */
export type EventData<N extends EventName> = Declared extends infer M
  ? M extends Record<N, v.GenericSchema>
    ? v.InferInput<M[N]>
    : never
  : never;
