import * as v from 'valibot';
import { ianaTimezone } from '#shared/locations/schemas';
import {
  counter,
  dateTime,
  isoTime,
  nonEmptyString,
  objectId,
  pageQuery,
  rangedListQuery,
  rangePageMeta,
  SERVICE_TYPES,
  uuid,
} from '#shared/schemas/common';

const text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max));
const name = nonEmptyString(200);
export const versionRev = v.pipe(
  v.string('must be a string'),
  v.maxLength(64, 'must be a version_rev (<seq>-<token>)'),
  v.regex(/^\d+-[A-Za-z0-9_-]+$/, 'must be a version_rev (<seq>-<token>)'),
);

const address = v.object({
  street_address: v.optional(text(500)),
  city: v.optional(text(200)),
  state: v.optional(v.nullable(text(200))),
  country: v.optional(text(100)),
  zip_code: v.optional(v.nullable(v.union([v.number(), text(20)]))),
  building_name: v.optional(v.nullable(text(200))),
  latitude: v.optional(v.pipe(v.number('must be a number'), v.minValue(-90), v.maxValue(90))),
  longitude: v.optional(v.pipe(v.number('must be a number'), v.minValue(-180), v.maxValue(180))),
});
const window = v.object({
  start_time_utc: v.optional(dateTime),
  end_time_utc: v.optional(dateTime),
  start_timezone: v.optional(ianaTimezone),
  end_timezone: v.optional(ianaTimezone),
});
export const task = v.looseObject({
  id: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(100)),
  total_item_weight: v.optional(v.nullable(v.number())),
  total_weight_unit: v.optional(v.nullable(text(10))),
  total_item_volume: v.optional(v.nullable(v.number())),
  total_volume_unit: v.optional(v.nullable(text(10))),
  total_item_count: v.optional(v.nullable(v.number())),
  client_time_utc: v.optional(v.nullable(dateTime)),
  client_timezone: v.optional(v.nullable(text(64))),
  from_address: v.optional(address),
  to_address: v.optional(address),
  from_time_window: v.optional(window),
  to_time_window: v.optional(window),
});
export const runsheet = v.object({
  id: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(100)),
  name: v.optional(text(200)),
  tasks: v.pipe(v.array(task), v.maxLength(200, 'must hold at most 200 tasks')),
});

/**
 * A runsheet as P5 takes it: its tasks carried inline (`tasks`), or named as imported tasks (`task_ids`, X10 ids)
 * that it then holds as imported, in that order. One of the two (planning-members.ts says so with a 400 otherwise).
 */
export const plannedRunsheet = v.object({
  id: runsheet.entries.id,
  name: runsheet.entries.name,
  tasks: v.optional(runsheet.entries.tasks),
  task_ids: v.optional(v.pipe(v.array(objectId), v.maxLength(200, 'must name at most 200 tasks'))),
  /** Contract 4.7: only drivers with this among their `service_types` are offered it (when they list any). */
  service_type: v.optional(v.picklist(SERVICE_TYPES, `must be one of ${SERVICE_TYPES.join(', ')}`)),
});

export const MAX_PER_CALL = 90;
/** P5's `task_ids`, summed over the call's runsheets (contract 4.9): each is read and marked, so the call's cost. */
export const MAX_TASK_IDS_PER_CALL = 1000;

/**
 * The runsheets' `task_ids` together hold at most MAX_TASK_IDS_PER_CALL: the runsheet whose ids pass it is refused
 * at its `runsheets[i].task_ids` (the per-runsheet bound of 200 alone would let 90 runsheets name 18 000).
 */
const taskIdsPerCall = v.rawCheck<v.InferOutput<typeof plannedRunsheet>[]>(({ dataset, addIssue }) => {
  if (!dataset.typed) return;
  let total = 0;
  const crossing = dataset.value.findIndex((runsheet) => {
    total += runsheet.task_ids?.length ?? 0;
    return total > MAX_TASK_IDS_PER_CALL;
  });
  if (crossing < 0) return;
  const runsheet = dataset.value[crossing]!;
  addIssue({
    message: `brings the call to ${total} task_ids, past the ${MAX_TASK_IDS_PER_CALL} one call may name: send the rest in another`,
    path: [
      { type: 'array', origin: 'value', input: dataset.value, key: crossing, value: runsheet },
      { type: 'object', origin: 'value', input: runsheet, key: 'task_ids', value: runsheet.task_ids },
    ],
  });
});

export const createPlanningBody = v.object({ name });
export const updatePlanningBody = v.object({ name, version_rev: versionRev });
export const addRunsheetsBody = v.object({
  runsheets: v.pipe(
    v.array(plannedRunsheet),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_PER_CALL, `must hold at most ${MAX_PER_CALL} runsheets a call`),
    taskIdsPerCall,
  ),
});
export const addDriversBody = v.object({
  drivers: v.pipe(
    v.array(v.object({ id: uuid })),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_PER_CALL, `must hold at most ${MAX_PER_CALL} drivers a call`),
  ),
});
/** P9's settings of the job, when the body leaves them out (contract 4.6, 4.7); also a job started before 4.7's. */
export const JOB_DEFAULTS = {
  max_candidates: 5,
  offer_ttl_s: 900,
  max_waves: 3,
  max_runsheets_per_driver: 1,
  max_location_age_s: 1800,
} as const;

/** An optional whole number in [min, max] that defaults to `fallback`; out of range is a 400 that names the range. */
const setting = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    fallback,
  );

export const startJobBody = v.object({
  version_rev: versionRev,
  max_candidates: setting(1, 50, JOB_DEFAULTS.max_candidates),
  offer_ttl_s: setting(5, 86_400, JOB_DEFAULTS.offer_ttl_s),
  max_waves: setting(1, 10, JOB_DEFAULTS.max_waves),
  max_runsheets_per_driver: setting(1, 50, JOB_DEFAULTS.max_runsheets_per_driver),
  max_location_age_s: setting(60, 86_400, JOB_DEFAULTS.max_location_age_s),
});
export const jobResultBody = v.object({
  planning_job_id: uuid,
  total_pairs_counted: counter,
  total_runsheets_counted: counter,
  total_drivers_counted: counter,
  start_time: dateTime,
  end_time: dateTime,
});
export const planningParams = v.object({ planningID: uuid });
export const runsheetParams = v.object({
  planningID: uuid,
  runsheetID: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
});
export const driverParams = v.object({ planningID: uuid, driverID: uuid });
/** `org_id`: SysAdmin's view of one organisation's plannings (another role may name only its own). */
export const listPlanningsQuery = rangedListQuery({ org_id: v.optional(uuid) });

// Broadcast records
export const pairParams = v.object({ plan_id: uuid, pair_id: uuid });
export const planParams = v.object({ plan_id: uuid });
export const createPairBody = v.object({
  pair: v.object({ id: uuid, runsheet, driver: v.object({ id: uuid, name: v.optional(text(200)) }) }),
  plan: v.object({ id: uuid, name: v.optional(text(200)) }),
  happened_at_utc: dateTime,
});
export const pairEventBody = v.object({ happened_at_utc: dateTime });
export const systemRejectBody = v.object({ happened_at_utc: dateTime, reason: v.optional(v.nullable(text(200))) });

/** The planning job's and the pair's machines (contract 4.6): the domain's types are these lists. */
export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
export const PAIR_STATES = ['created', 'broadcasted', 'accepted', 'rejected', 'deleted', 'withdrawn'] as const;
export const PAIR_ACTIONS = [
  'created',
  'broadcast',
  'accepted',
  'rejected',
  'system_rejected',
  'deleted',
  'assigned',
  'withdrawn',
] as const;

// Replies (documented in the OpenAPI document)
const jobStatus = v.picklist(JOB_STATUSES);
/**
 * A task in a reply. Open by design: a task keeps the members its sender gave it (the spec: "Other fields of a task
 * record: not shown"; P5 and R3 keep a task's unknown members), so only the members named here are checked; its
 * addresses and time windows are closed.
 */
/**
 * A stop of a runsheet that route planning built (contract 4.10): which task, pickup or drop-off, where, and when the
 * vehicle arrives, starts its service and leaves, in visiting order.
 */
export const builtStop = v.object({
  task_id: v.string(),
  kind: v.picklist(['pickup', 'dropoff']),
  latitude: v.number(),
  longitude: v.number(),
  arrival_utc: v.string(),
  start_utc: v.string(),
  departure_utc: v.string(),
  distance_from_previous_m: v.number(),
});
/** A built runsheet's task also carries when its pickup and drop-off are planned to start (4.10). */
const plannedTimes = {
  planned_pickup_utc: v.optional(v.string()),
  planned_dropoff_utc: v.optional(v.string()),
};
const taskView = v.looseObject({ ...task.entries, ...plannedTimes });
const excludedCounts = v.object({
  off_duty: v.number(),
  no_location: v.number(),
  location_stale: v.number(),
  service_type: v.number(),
  at_capacity: v.number(),
  already_offered: v.number(),
});
export const unassignedReasonView = v.object({
  code: v.picklist(['no_driver_accepted', 'no_eligible_driver']),
  detail: v.string(),
  waves: v.number(),
  offers: v.object({ rejected: v.number(), expired: v.number(), closed: v.number() }),
  not_asked: v.number(),
  excluded: excludedCounts,
});
export const RUNSHEET_STATUSES = [
  'open',
  'offered',
  'assigned',
  'unassigned',
  'in_progress',
  'completed',
  'cancelled',
] as const;
/** A runsheet's dispatch status and the members its status carries (contract 4.7). */
const runsheetStatusEntries = {
  status: v.picklist(RUNSHEET_STATUSES),
  wave: v.optional(v.number()),
  offers_open: v.optional(v.number()),
  offer_expires_at: v.optional(v.nullable(isoTime)),
  assigned_driver: v.optional(v.object({ id: v.string(), name: v.string() })),
  assigned_at: v.optional(isoTime),
  unassigned_reason: v.optional(unassignedReasonView),
  cancelled_at: v.optional(isoTime),
  cancel_reason: v.optional(v.string()),
  /** Contract 4.8: once its driver reports (`in_progress`, `completed`). */
  started_at: v.optional(isoTime),
  tasks_done: v.optional(v.number()),
  completed_at: v.optional(isoTime),
};
const runsheetView = v.object({
  id: v.string(),
  name: v.optional(v.string()),
  service_type: v.optional(v.string()),
  tasks: v.array(taskView),
  ...runsheetStatusEntries,
  tasks_total: v.optional(v.number()),
  stops: v.optional(v.array(builtStop)),
});
/** X14's entry, X16–X18's reply: a runsheet without its tasks, with its status. */
export const runsheetSummary = v.object({
  id: v.string(),
  name: v.optional(v.string()),
  service_type: v.optional(v.string()),
  tasks_total: v.number(),
  ...runsheetStatusEntries,
});
export const runsheetList = v.object({
  runsheets: v.array(runsheetSummary),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});
export const runsheetsQuery = v.object({
  ...pageQuery(50, 1000),
  status: v.optional(v.picklist(RUNSHEET_STATUSES, `must be one of ${RUNSHEET_STATUSES.join(', ')}`)),
});
export const assignBody = v.object({ driver_id: uuid });
export const reofferBody = v.object({
  max_candidates: v.optional(
    v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1), v.maxValue(50)),
  ),
  offer_ttl_s: v.optional(
    v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(5), v.maxValue(86_400)),
  ),
});
export const cancelBody = v.object({ reason: nonEmptyString(500) });
export const withdrawBody = v.object({ happened_at_utc: dateTime, reason: nonEmptyString(500) });
/** Tasks inside pair records carry `version_seq` (spec): the planning's version the pair's runsheet was taken at. */
const pairTaskView = v.looseObject({ ...task.entries, version_seq: v.number() });
const jobStatuses = v.array(v.object({ status: jobStatus, set_at_utc: isoTime }));
export const planningView = v.object({
  id: v.string(),
  org_id: v.string(),
  name: v.string(),
  version_seq: v.number(),
  version_rev: v.string(),
  total_runsheets: v.number(),
  total_drivers: v.number(),
  created_at: isoTime,
  last_executed_at_client_time_utc: v.nullable(isoTime),
  last_executed_at_client_timezone: v.nullable(v.string()),
  last_executed_at_server_time: v.nullable(isoTime),
  runsheets: v.array(runsheetView),
  drivers: v.array(v.object({ id: v.string() })),
  job: v.optional(
    v.object({
      id: v.string(),
      current_status: jobStatus,
      statuses: jobStatuses,
      status_updated_at: isoTime,
      max_candidates: v.number(),
      offer_ttl_s: v.number(),
      max_waves: v.number(),
      max_runsheets_per_driver: v.number(),
      max_location_age_s: v.number(),
    }),
  ),
  server_time: isoTime,
});
export const planningList = v.object({
  meta: rangePageMeta,
  plannings: v.array(
    v.object({
      id: v.string(),
      name: v.string(),
      total_runsheets: v.number(),
      total_drivers: v.number(),
      version_rev: v.string(),
    }),
  ),
});
export const jobStatusView = v.object({
  id: v.string(),
  planning_job_id: v.string(),
  current_status: jobStatus,
  status_updated_at: isoTime,
  statuses: jobStatuses,
  server_time: isoTime,
});
export const jobResultView = v.object({
  id: v.string(),
  planning_job_id: v.string(),
  total_pairs_counted: v.number(),
  total_runsheets_counted: v.number(),
  total_drivers_counted: v.number(),
  start_time: isoTime,
  end_time: isoTime,
  server_time: isoTime,
});
const pairState = v.picklist(PAIR_STATES);
const pairRecord = v.object({
  id: v.string(),
  pair: v.object({
    id: v.string(),
    runsheet: v.object({ id: v.string(), name: v.optional(v.string()), tasks: v.array(pairTaskView) }),
    driver: v.object({ id: v.string(), name: v.string() }),
  }),
  plan: v.object({ id: v.string(), name: v.optional(v.string()) }),
  statuses: v.array(
    v.object({
      current_state: pairState,
      action: v.picklist(PAIR_ACTIONS),
      reason: v.nullable(v.string()),
      expired_time: v.nullable(isoTime),
      happened_at_utc: isoTime,
      saved_at_utc: isoTime,
    }),
  ),
  current_state: pairState,
});
export const pairReply = v.object({ pair_record: pairRecord });
/** R2: a plan's pair records by pair id, a page at a time (a page ends early before the answer passes 6 MB). */
export const pairsQuery = v.object({ ...pageQuery(1000, 1000) });
export const pairList = v.object({
  pair_records: v.array(pairRecord),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});

/** X12: the caller's own offers; `state=all` adds the history after the open ones. */
export const driverOffersQuery = v.object({
  ...pageQuery(200, 1000),
  state: v.optional(v.picklist(['broadcasted', 'all'], 'must be broadcasted or all'), 'broadcasted'),
});
export const driverOfferList = v.object({
  offers: v.array(pairRecord),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});

// Executing a runsheet (contract 4.8)

/** A task's machine: its statuses and the events a driver reports. */
export const TASK_STATUSES = ['pending', 'picked_up', 'delivered', 'failed'] as const;
export const TASK_EVENT_TYPES = ['arrived', 'picked_up', 'delivered', 'failed'] as const;
export const FAILURE_REASONS = [
  'recipient_absent',
  'address_not_found',
  'refused',
  'damaged',
  'access_denied',
  'other',
] as const;
export const PROOF_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
/** X21: the largest proof a driver may upload (10 MiB). */
export const PROOF_MAX_BYTES = 10 * 1024 * 1024;
/** X20: proofs one event may name. */
export const PROOFS_PER_EVENT = 5;
/** X20: the events a task's timeline holds at most, and of them the arrivals (contract 4.8; 409 `timeline_full`). */
export const TIMELINE_LIMIT = 20;
export const ARRIVALS_LIMIT = 3;

export const taskEventParams = v.object({
  runsheetID: runsheetParams.entries.runsheetID,
  taskID: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
});
export const taskEventBody = v.object({
  type: v.picklist(TASK_EVENT_TYPES, `must be one of ${TASK_EVENT_TYPES.join(', ')}`),
  happened_at_utc: dateTime,
  latitude: v.optional(v.pipe(v.number('must be a number'), v.minValue(-90), v.maxValue(90))),
  longitude: v.optional(v.pipe(v.number('must be a number'), v.minValue(-180), v.maxValue(180))),
  failure_reason: v.optional(v.picklist(FAILURE_REASONS, `must be one of ${FAILURE_REASONS.join(', ')}`)),
  note: v.optional(nonEmptyString(1000)),
  recipient_name: v.optional(nonEmptyString(200)),
  proof_ids: v.optional(
    v.pipe(v.array(objectId), v.maxLength(PROOFS_PER_EVENT, `must name at most ${PROOFS_PER_EVENT} proofs`)),
  ),
});
export const proofBody = v.object({
  content_type: v.picklist(PROOF_CONTENT_TYPES, `must be one of ${PROOF_CONTENT_TYPES.join(', ')}`),
  size: v.pipe(
    v.number('must be a number'),
    v.integer('must be an integer'),
    v.minValue(1, 'must be at least 1 byte'),
    v.maxValue(PROOF_MAX_BYTES, `must be at most ${PROOF_MAX_BYTES} bytes (10 MiB)`),
  ),
});
export const proofReply = v.object({ proof_id: v.string(), upload_url: v.string(), expires_at: isoTime });

const timelineEntry = v.object({
  type: v.picklist(TASK_EVENT_TYPES),
  status: v.picklist(TASK_STATUSES),
  happened_at_utc: isoTime,
  saved_at_utc: isoTime,
  latitude: v.optional(v.number()),
  longitude: v.optional(v.number()),
  failure_reason: v.optional(v.picklist(FAILURE_REASONS)),
  note: v.optional(v.string()),
  recipient_name: v.optional(v.string()),
  proof_ids: v.optional(v.array(v.string())),
});
/** A task's progress as X10, X11, X20 and X22 show it. */
export const taskProgressEntries = {
  status: v.picklist(TASK_STATUSES),
  timeline: v.pipe(
    v.array(timelineEntry),
    v.maxLength(TIMELINE_LIMIT),
    v.description(
      `The task's events in the order they happened: at most ${TIMELINE_LIMIT}, of them ${ARRIVALS_LIMIT} arrivals`,
    ),
  ),
};
export const taskEventReply = v.object({
  task: v.object({
    id: v.string(),
    planning_id: v.string(),
    runsheet_id: v.string(),
    ...taskProgressEntries,
  }),
});
const proofView = v.object({
  id: v.string(),
  content_type: v.string(),
  size: v.number(),
  url: v.string(),
  expires_at: isoTime,
});
/**
 * Live ETAs (contract 4.11), on X22 for a runsheet `assigned` or `in_progress` only (absent otherwise: its `status`
 * says why). Each is when the stop's service is expected to start, as `planned_*` is when it was planned to.
 */
export const ETA_REASONS = ['no_recent_position'] as const;
const eta = (words: string) => v.pipe(v.nullable(isoTime), v.description(words));
const taskEtaEntries = {
  eta_pickup_utc: v.optional(eta('The pickup’s ETA; null once picked up (or failed), or without a recent position')),
  eta_dropoff_utc: v.optional(eta('The drop-off’s ETA; null once delivered or failed, or without a recent position')),
  late_by_s: v.optional(
    v.pipe(
      v.nullable(v.number()),
      v.description('Seconds its latest stop still to do is expected past its window’s end (0 on time); null unknown'),
    ),
  ),
};
const runsheetEtaEntries = {
  eta_updated_at: v.optional(
    v.pipe(
      v.nullable(isoTime),
      v.description(
        'The moment the ETAs are reckoned from (the later of the driver’s last fix and now); null with eta_reason',
      ),
    ),
  ),
  delay_s: v.optional(
    v.pipe(
      v.nullable(v.number()),
      v.description('The largest late_by_s of the stops still to do; null with eta_reason'),
    ),
  ),
  eta_reason: v.optional(
    v.pipe(
      v.nullable(v.picklist(ETA_REASONS)),
      v.description('Why every ETA is null: no_recent_position (the driver has no fix in the last 10 minutes)'),
    ),
  ),
};
export const runsheetReply = v.object({
  runsheet: v.object({
    id: v.string(),
    planning_id: v.string(),
    name: v.optional(v.string()),
    service_type: v.optional(v.string()),
    tasks_total: v.number(),
    ...runsheetStatusEntries,
    ...runsheetEtaEntries,
    tasks: v.array(
      v.looseObject({
        ...task.entries,
        ...plannedTimes,
        ...taskProgressEntries,
        proofs: v.array(proofView),
        ...taskEtaEntries,
      }),
    ),
    stops: v.optional(v.array(builtStop)),
  }),
  server_time: isoTime,
});
