/** Route planning's operations (contract 4.10): what the OpenAPI document says of them. */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

export const routingDocs: AreaDocs = {
  X23: {
    description:
      'Builds runsheets from imported tasks and a fleet: each task (a pickup at its `from_address`, then a drop-off ' +
      'at its `to_address`, by one vehicle) goes to a vehicle, and each vehicle’s stops are ordered so that every ' +
      'time window, capacity, shift and service type holds, as many tasks as possible are planned, and the total ' +
      'planned distance is as small as the search finds in `time_limit_s`. Answers 202 with the build `queued`; a ' +
      'worker of its own solves it (X24 shows `progress`, then the `result`). Unless `dry_run`, the runsheets are ' +
      'added to the planning as P5 adds them, with their `stops[]` and planned times; a vehicle with a `driver_id` ' +
      'has its runsheet assigned to that driver as X16 does. 409 when `version_rev` is stale or a task is already in ' +
      'a runsheet (at its path); a build that finds the planning changed before it adds anything fails with ' +
      '`planning_changed`, one whose runsheets the planning could not hold with `planning_too_large`, one whose ' +
      'caller lost access (checked when it starts solving and before it applies) with `access_revoked`. ' +
      '`Idempotency-Key` is honoured: a repeat builds once. docs/routing.md explains the model.',
    example: {
      params: { planningID: EXAMPLE.planningID },
      body: {
        task_ids: [EXAMPLE.taskID],
        vehicles: [
          {
            id: 'van',
            count: 2,
            start: { latitude: 1.3343, longitude: 103.8563 },
            shift_start_utc: '2026-11-22T00:00:00Z',
            shift_end_utc: '2026-11-22T10:00:00Z',
            capacity: { weight_kg: 800, volume_m3: 6, items: 120 },
            service_types: ['van_1.7m'],
          },
        ],
        travel: { speed_kmh: 30, detour_factor: 1.3 },
        service_s: { pickup: 120, dropoff: 180 },
        objective: 'distance',
        time_limit_s: 1,
        dry_run: true,
        version_rev: EXAMPLE.versionRev,
      },
    },
    errors: {
      429:
        'The organisation has 2 builds queued or solving already, the most it may (`rate_limited`, X23 and X30 ' +
        'together); `Retry-After` says when one may have ended. Or API Gateway stage throttling',
    },
    fields: {
      'params/planningID': 'The planning the runsheets go into',
      'body/task_ids': 'The tasks to plan: 1–2 000 X10 task ids of the planning’s organisation (or `import_job_id`)',
      'body/task_ids/*': 'An imported task’s id (X10), in no runsheet yet',
      'body/import_job_id': 'Plan every task of this import job instead of naming them (at most 2 000)',
      'body/vehicles': 'The fleet: 1–200 entries, at most 500 vehicles in all (counting `count`)',
      'body/vehicles/*/id':
        'The vehicle’s id (letters, digits, `_ . : -`); with `count`, ids `<id>-1` … `<id>-<count>`; every vehicle’s id, expanded, differs from the others (a repeat is a 400 at its `id`)',
      'body/vehicles/*/count': 'This many identical vehicles (1–500); 1 with a `driver_id`',
      'body/vehicles/*/driver_id': 'A driver of the planning (P7): the vehicle’s runsheet is assigned to them',
      'body/vehicles/*/start': 'Where the vehicle leaves from',
      'body/vehicles/*/start/latitude': 'Latitude, −90 to 90',
      'body/vehicles/*/start/longitude': 'Longitude, −180 to 180',
      'body/vehicles/*/end':
        'Where the vehicle must be by `shift_end_utc` (default: `start`); `null`: the route ends at its last stop',
      'body/vehicles/*/end/latitude': 'Latitude, −90 to 90',
      'body/vehicles/*/end/longitude': 'Longitude, −180 to 180',
      'body/vehicles/*/shift_start_utc': 'The vehicle leaves `start` no earlier than this',
      'body/vehicles/*/shift_end_utc': 'The vehicle is at `end` (or done with its last stop) by this',
      'body/vehicles/*/capacity': 'What it may carry at once; a dimension not given is unlimited',
      'body/vehicles/*/capacity/weight_kg': 'Kilograms (a task’s `total_item_weight` after its unit)',
      'body/vehicles/*/capacity/volume_m3': 'Cubic metres (a task’s `total_item_volume` after its unit)',
      'body/vehicles/*/capacity/items': 'Items (a task’s `total_item_count`)',
      'body/vehicles/*/service_types':
        'Only tasks whose import job’s `service_type` is one of these (contract 4.7); all when absent',
      'body/vehicles/*/service_types/*': 'A service type',
      'body/vehicles/*/max_stops': 'At most this many stops (pickups and drop-offs; 2–400, default 400)',
      'body/travel': 'The travel model: great-circle distance × `detour_factor`, driven at `speed_kmh`',
      'body/travel/speed_kmh': 'Average speed, 5–200 km/h (default 30)',
      'body/travel/detour_factor': 'Road distance over straight-line distance, 1.0–3.0 (default 1.3)',
      'body/service_s': 'Time spent at a stop, unless the task’s `from_service_s`/`to_service_s` says otherwise',
      'body/service_s/pickup': 'Seconds at a pickup, 0–7 200 (default 120)',
      'body/service_s/dropoff': 'Seconds at a drop-off, 0–7 200 (default 180)',
      'body/objective':
        '`distance` (default: most tasks, then least distance) or `vehicles` (most tasks, then fewest vehicles)',
      'body/time_limit_s': 'How long the search may run, 1–300 s (default 10)',
      'body/dry_run': 'Compute and answer the result without adding anything to the planning (default false)',
      'body/version_rev': 'The planning’s current `version_rev` (P3): a stale one is a 409 at once',
    },
  },
  X30: {
    description:
      'Adds tasks that are in no runsheet (new imports, or tasks P6/X18 freed) to the planning’s live runsheets: ' +
      'those named by `runsheet_ids` (default: every runsheet of imported tasks that is not completed or cancelled ' +
      'and holds at most 199 tasks). The same solver as X23, started from the routes as they are: the stops done ' +
      'stay where they are, a runsheet under way starts from its driver’s last position at the later of the fix’s ' +
      'time and now, the loads on board count, each runsheet keeps its vehicle (a hand-made one: no capacity limit, ' +
      'its shift to the end of the day) and a runsheet the search adds nothing to keeps its order; `vehicles[]` ' +
      '(as X23’s) may add new runsheets for tasks that fit nowhere. Answers 202 with a build of `kind: "insertion"` ' +
      '(X24 reads it, X25 lists it). Its result is X23’s: each runsheet added to with its whole remaining stop list ' +
      'and `added[]`, new runsheets as X23 makes them, `unplanned[]`. Unless `dry_run`, it is applied as one change ' +
      'of the planning: the tasks join their runsheets, each changed runsheet’s assigned driver hears ' +
      '`runsheet.updated`, open offers show the new tasks, ETAs follow the new order. 409 when `version_rev` is stale, ' +
      'a task is already in a runsheet (at its path) or a named runsheet is completed, cancelled or of inline tasks; ' +
      'a build that finds the planning changed before it applies fails with `planning_changed`. docs/live-operations.md ' +
      'explains a planner’s afternoon.',
    example: {
      params: { planningID: EXAMPLE.planningID },
      body: {
        task_ids: [EXAMPLE.taskID],
        time_limit_s: 1,
        dry_run: true,
        version_rev: EXAMPLE.versionRev,
      },
    },
    errors: {
      429:
        'The organisation has 2 builds queued or solving already, the most it may (`rate_limited`, X23 and X30 ' +
        'together); `Retry-After` says when one may have ended. Or API Gateway stage throttling',
    },
    fields: {
      'params/planningID': 'The planning whose live runsheets take the tasks',
      'body/task_ids': 'The tasks to add: 1–2 000 X10 task ids of the planning’s organisation (or `import_job_id`)',
      'body/task_ids/*': 'An imported task’s id (X10), in no runsheet yet',
      'body/import_job_id': 'Add every task of this import job instead of naming them (at most 2 000)',
      'body/runsheet_ids':
        'The runsheets that may take tasks (1–500 of the planning’s, of imported tasks, neither completed nor cancelled); default: every live one with at most 199 tasks',
      'body/runsheet_ids/*': 'A runsheet’s id (P3)',
      'body/vehicles': 'New vehicles for tasks no live runsheet can take (as X23’s `vehicles`): used only where needed',
      'body/time_limit_s': 'How long the search may run, 1–60 s (default 5)',
      'body/dry_run': 'Compute and answer the result without adding anything to the planning (default false)',
      'body/version_rev': 'The planning’s current `version_rev` (P3): a stale one is a 409 at once',
    },
  },
  X24: {
    description:
      'A route build: `status` `queued` → `solving` → `completed` | `failed`; `progress` (best distance so far, ' +
      'time spent) while solving; once completed its `result`: `runsheets[]` (one per vehicle used, each with its ' +
      'stops in visiting order and their planned arrival, start and departure times), `unplanned[]` (each task left ' +
      'out, with a `code` and a sentence a planner understands) and `summary`; once failed its `error` ' +
      '(`planning_changed`, `planning_too_large`, `build_failed`).',
    example: { params: { planningID: EXAMPLE.planningID, buildID: EXAMPLE.routeBuildID } },
    fields: {
      'params/planningID': 'The planning’s id',
      'params/buildID': 'The build’s id (X23 answered it)',
    },
  },
  X31: {
    description:
      'Applies a completed dry run (X23 with `dry_run: true`) exactly as X24 answered it: its stored `result`, the ' +
      'same runsheets, stops and planned times, is added to the planning as a build adds its own (as P5 adds ' +
      'runsheets, the tasks marked, a vehicle’s driver assigned as X16 does), and `route_build.completed` goes out ' +
      'again with `applied_at`. Once: a second apply is a 409, and of two at once exactly one wins. Only while the ' +
      'planning is as it was when the dry run began: a planning moved since, or a stale `version_rev`, is a 409 ' +
      '`planning_changed`; a task of the result in a runsheet now is a 409 naming it; a build that is not a completed ' +
      'dry run is a 409. 410 once the dry run was asked for 24 hours ago or more. `Idempotency-Key` is honoured: a ' +
      'repeat answers the first apply, and a retry after a failure finishes it. docs/routing.md explains the review.',
    example: {
      params: { planningID: EXAMPLE.planningID, buildID: EXAMPLE.routeBuildID },
      body: { version_rev: EXAMPLE.versionRev },
    },
    errors: {
      409:
        'The planning changed since the dry run began, or `version_rev` is stale (`planning_changed`); a task of the ' +
        'result is in a runsheet now; the dry run was applied already; or the build is not a completed dry run',
      410: 'The dry run was asked for 24 hours ago or more: its result may no longer be applied (`gone`); build again',
    },
    fields: {
      'params/planningID': 'The planning the dry run was built for',
      'params/buildID': 'The dry run’s id (X23 answered it)',
      'body/version_rev': 'The planning’s current `version_rev` (P3), which must still be the one the dry run began at',
    },
  },
  X25: {
    description: 'The planning’s route builds, newest first, each without its `result` (X24 has it). Paged.',
    example: { params: { planningID: EXAMPLE.planningID }, query: { per_page: '20' } },
    fields: { 'params/planningID': 'The planning’s id' },
  },
};

// X30's vehicles are X23's: the same fields, said once.
Object.assign(
  routingDocs['X30']!.fields!,
  Object.fromEntries(Object.entries(routingDocs['X23']!.fields!).filter(([key]) => key.startsWith('body/vehicles/'))),
);
