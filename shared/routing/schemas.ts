/** Route planning's request and answer shapes (contract 4.10): X23's body, X24's build, X25's list. */
import * as v from 'valibot';
import { builtStop, versionRev } from '#shared/planning/schemas';
import { dateTime, forwardTo, objectId, pageQuery, SERVICE_TYPES, uuid } from '#shared/schemas/common';

/** A whole number in [min, max]; optional with `fallback` when given. */
const whole = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
const ranged = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.finite('must be a number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

export const ROUTE_DEFAULTS = {
  speed_kmh: 30,
  detour_factor: 1.3,
  pickup_s: 120,
  dropoff_s: 180,
  time_limit_s: 10,
} as const;

/** X23 bounds (contract 4.10). */
export const MAX_TASKS = 2000;
export const MAX_VEHICLE_ENTRIES = 200;
export const MAX_VEHICLES = 500;
/**
 * The bound of a build's body (X23; X30 and X31 name it too): the largest legitimate body (2 000 task ids, 200
 * vehicle entries with every field at its longest) is 173 KB as JSON.stringify writes it, 292 KB indented by four.
 */
export const MAX_BUILD_BODY_BYTES = 512 * 1024;
/** A runsheet holds at most 200 tasks (P5's bound): 400 stops. */
export const MAX_RUNSHEET_TASKS = 200;

const point = v.object({ latitude: ranged(-90, 90), longitude: ranged(-180, 180) });

/**
 * The pipes below run their cross-field checks even when a field fails (`abortPipeEarly: false` on the pipe, `true`
 * again on its fields, whose own pipes stop at their first problem): one answer names every problem (docs/routing.md).
 */
const allProblems = <T extends v.GenericSchema>(schema: T) => v.config(schema, { abortPipeEarly: false });
const firstProblem = <T extends v.GenericSchema>(schema: T) => v.config(schema, { abortPipeEarly: true });

const vehicle = allProblems(
  v.pipe(
    firstProblem(
      v.object({
        id: v.pipe(
          v.string('must be a string'),
          v.minLength(1, 'must not be empty'),
          v.maxLength(60, 'must be at most 60 characters'),
          v.regex(/^[A-Za-z0-9_.:-]+$/, 'may hold only letters, digits and _ . : -'),
        ),
        count: v.optional(whole(1, MAX_VEHICLES)),
        driver_id: v.optional(uuid),
        start: point,
        end: v.optional(v.nullable(point)),
        shift_start_utc: dateTime,
        shift_end_utc: dateTime,
        capacity: v.optional(
          v.object({
            weight_kg: v.optional(ranged(0, 1_000_000)),
            volume_m3: v.optional(ranged(0, 100_000)),
            items: v.optional(whole(0, 10_000_000)),
          }),
        ),
        service_types: v.optional(
          v.pipe(
            v.array(v.picklist(SERVICE_TYPES, `must be one of ${SERVICE_TYPES.join(', ')}`)),
            v.maxLength(SERVICE_TYPES.length),
          ),
        ),
        max_stops: v.optional(whole(2, 2 * MAX_RUNSHEET_TASKS)),
      }),
    ),
    // Judged whenever the fields they read are valid (partialCheck), so that they come with the others' problems.
    forwardTo(
      v.partialCheck(
        [['driver_id'], ['count']],
        (x) => x.driver_id === undefined || (x.count ?? 1) === 1,
        'must be 1 for a vehicle with a driver_id',
      ),
      ['count'],
    ),
    forwardTo(
      v.partialCheck(
        [['shift_start_utc'], ['shift_end_utc']],
        (x) => Date.parse(x.shift_end_utc) > Date.parse(x.shift_start_utc),
        'must be after shift_start_utc',
      ),
      ['shift_end_utc'],
    ),
  ),
);

/** The vehicles together are at most MAX_VEHICLES (counting `count`): refused at the entry that passes it. */
const vehiclesInAll = v.rawCheck<v.InferOutput<typeof vehicle>[]>(({ dataset, addIssue }) => {
  if (!dataset.typed) return;
  let total = 0;
  const seen = new Set<string>();
  /** A driver drives one vehicle: two vehicles naming one driver would both be assigned to them (X16). */
  const drivers = new Set<string>();
  dataset.value.forEach((entry, i) => {
    const at = (key: string, value: unknown): [v.IssuePathItem, v.IssuePathItem] => [
      { type: 'array', origin: 'value', input: dataset.value, key: i, value: entry },
      { type: 'object', origin: 'value', input: entry, key, value },
    ];
    // Ids after `count` expands them (`<id>-1` … `<id>-<count>`): each names one vehicle and its runsheet.
    const ids =
      entry.count === undefined ? [entry.id] : Array.from({ length: entry.count }, (_, k) => `${entry.id}-${k + 1}`);
    const repeated = [entry.id, ...ids].find((id) => seen.has(id));
    if (repeated !== undefined)
      addIssue({
        message:
          repeated === entry.id ? 'repeats an earlier vehicle id' : `repeats ${repeated}, an earlier vehicle's id`,
        path: at('id', entry.id),
      });
    for (const id of new Set([entry.id, ...ids])) seen.add(id);
    if (entry.driver_id !== undefined) {
      if (drivers.has(entry.driver_id))
        addIssue({ message: 'names a driver an earlier vehicle already has', path: at('driver_id', entry.driver_id) });
      drivers.add(entry.driver_id);
    }
    const before = total;
    total += entry.count ?? 1;
    if (before <= MAX_VEHICLES && total > MAX_VEHICLES)
      addIssue({
        message: `brings the vehicles to ${total}, past the ${MAX_VEHICLES} one build may use`,
        path: at('count', entry.count),
      });
  });
});

/** The tasks a build names (X23, X30): 1–2 000 X10 ids. */
const taskIds = v.optional(
  v.pipe(
    v.array(objectId),
    v.minLength(1, 'must name at least one task'),
    v.maxLength(MAX_TASKS, `must name at most ${MAX_TASKS} tasks`),
  ),
);

export const createBuildBody = allProblems(
  v.pipe(
    firstProblem(
      v.object({
        task_ids: taskIds,
        import_job_id: v.optional(objectId),
        vehicles: v.pipe(
          v.array(vehicle),
          v.minLength(1, 'must name at least one vehicle'),
          v.maxLength(MAX_VEHICLE_ENTRIES, `must hold at most ${MAX_VEHICLE_ENTRIES} entries`),
          vehiclesInAll,
        ),
        travel: v.optional(
          v.object({
            speed_kmh: v.optional(ranged(5, 200), ROUTE_DEFAULTS.speed_kmh),
            detour_factor: v.optional(ranged(1, 3), ROUTE_DEFAULTS.detour_factor),
          }),
          {},
        ),
        service_s: v.optional(
          v.object({
            pickup: v.optional(whole(0, 7200), ROUTE_DEFAULTS.pickup_s),
            dropoff: v.optional(whole(0, 7200), ROUTE_DEFAULTS.dropoff_s),
          }),
          {},
        ),
        objective: v.optional(v.picklist(['distance', 'vehicles'], 'must be distance or vehicles'), 'distance'),
        time_limit_s: v.optional(whole(1, 300), ROUTE_DEFAULTS.time_limit_s),
        dry_run: v.optional(v.boolean('must be true or false'), false),
        version_rev: versionRev,
      }),
    ),
    forwardTo(
      v.partialCheck(
        [['task_ids'], ['import_job_id']],
        (x) => (x.task_ids === undefined) !== (x.import_job_id === undefined),
        'give task_ids or import_job_id',
      ),
      ['task_ids'],
    ),
  ),
);
export type CreateBuildInput = v.InferOutput<typeof createBuildBody>;

/** X30's bounds (contract 4.11): its own `time_limit_s` (1–60, default 5); the runsheets it may name. */
export const INSERTION_DEFAULTS = { time_limit_s: 5, max_time_limit_s: 60 } as const;
export const MAX_INSERTION_RUNSHEETS = 500;

/** X30: tasks into the live runsheets (contract 4.11), X23's fields where it has them. */
export const createInsertionBody = allProblems(
  v.pipe(
    firstProblem(
      v.object({
        task_ids: taskIds,
        import_job_id: v.optional(objectId),
        runsheet_ids: v.optional(
          v.pipe(
            v.array(
              v.pipe(
                v.string('must be a string'),
                v.minLength(1, 'must not be empty'),
                v.maxLength(100, 'must be at most 100 characters'),
              ),
            ),
            v.minLength(1, 'must name at least one runsheet'),
            v.maxLength(MAX_INSERTION_RUNSHEETS, `must name at most ${MAX_INSERTION_RUNSHEETS} runsheets`),
          ),
        ),
        vehicles: v.optional(
          v.pipe(
            v.array(vehicle),
            v.minLength(1, 'must name at least one vehicle (or leave vehicles out)'),
            v.maxLength(MAX_VEHICLE_ENTRIES, `must hold at most ${MAX_VEHICLE_ENTRIES} entries`),
            vehiclesInAll,
          ),
        ),
        time_limit_s: v.optional(whole(1, INSERTION_DEFAULTS.max_time_limit_s), INSERTION_DEFAULTS.time_limit_s),
        dry_run: v.optional(v.boolean('must be true or false'), false),
        version_rev: versionRev,
      }),
    ),
    forwardTo(
      v.partialCheck(
        [['task_ids'], ['import_job_id']],
        (x) => (x.task_ids === undefined) !== (x.import_job_id === undefined),
        'give task_ids or import_job_id',
      ),
      ['task_ids'],
    ),
  ),
);
export type CreateInsertionInput = v.InferOutput<typeof createInsertionBody>;
export type VehicleInput = CreateBuildInput['vehicles'][number];

export const buildParams = v.object({ planningID: uuid, buildID: uuid });
/** X31's body: the planning's version the planner reviewed the dry run against. */
export const applyBuildBody = v.object({ version_rev: versionRev });
export type ApplyBuildInput = v.InferOutput<typeof applyBuildBody>;
/** X25: `per_page` default 50, at most 1 000 (contract section 1: 100 for user lists, 1 000 elsewhere). */
export const buildsQuery = v.object({ ...pageQuery(50, 1000) });

const load = v.object({
  weight_kg: v.optional(v.number()),
  volume_m3: v.optional(v.number()),
  items: v.optional(v.number()),
});

export const UNPLANNED_CODES = [
  'no_coordinates',
  'time_window',
  'capacity',
  'service_type',
  'not_enough_vehicles',
] as const;

export const buildResult = v.object({
  runsheets: v.array(
    v.object({
      id: v.string(),
      name: v.string(),
      vehicle_id: v.string(),
      driver_id: v.optional(v.string()),
      planned_start_utc: v.string(),
      planned_end_utc: v.string(),
      planned_distance_m: v.number(),
      planned_duration_s: v.number(),
      peak_load: load,
      stops: v.array(builtStop),
      /** X30: the tasks this build added to the runsheet (a live runsheet's `stops` are its remaining ones). */
      added: v.optional(v.array(v.string())),
    }),
  ),
  unplanned: v.array(v.object({ task_id: v.string(), code: v.picklist(UNPLANNED_CODES), detail: v.string() })),
  summary: v.object({
    tasks: v.number(),
    planned: v.number(),
    unplanned: v.number(),
    vehicles_used: v.number(),
    total_distance_m: v.number(),
    total_duration_s: v.number(),
    solve_ms: v.number(),
    stopped: v.picklist(['time_limit', 'converged']),
  }),
});
export type BuildResult = v.InferOutput<typeof buildResult>;

export const BUILD_STATUSES = ['queued', 'solving', 'completed', 'failed'] as const;
export const BUILD_KINDS = ['build', 'insertion'] as const;

const buildFields = {
  id: v.string(),
  planning_id: v.string(),
  status: v.picklist(BUILD_STATUSES),
  /** `build` (X23: new runsheets) or `insertion` (X30: tasks added to the live runsheets). */
  kind: v.picklist(BUILD_KINDS),
  dry_run: v.boolean(),
  objective: v.picklist(['distance', 'vehicles']),
  time_limit_s: v.number(),
  tasks: v.number(),
  vehicles: v.number(),
  created_at: v.string(),
  updated_at: v.string(),
  progress: v.optional(v.object({ best_distance_m: v.number(), elapsed_ms: v.number() })),
  error: v.optional(v.object({ code: v.string(), detail: v.string() })),
  summary: v.optional(buildResult.entries.summary),
  /** A dry run applied by X31: when. */
  applied_at: v.optional(v.string()),
};

export const routeBuildListed = v.object(buildFields);
export const routeBuildView = v.object({ route_build: v.object({ ...buildFields, result: v.optional(buildResult) }) });
export const routeBuildList = v.object({
  route_builds: v.array(routeBuildListed),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});
