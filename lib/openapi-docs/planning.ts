/** The planning area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

/** A runsheet's members (P5's `runsheets[]`, R3's `pair.runsheet`), below the runsheet's own key. */
const RUNSHEET: Readonly<Record<string, string>> = {
  id: 'The runsheet’s id, chosen by the caller (1 to 100 characters; unique in the planning)',
  name: 'The runsheet’s name (up to 200 characters)',
  tasks: 'The runsheet’s tasks (at most 200); members beyond those below are kept as sent',
  'tasks/*/id': 'The task’s id (1 to 100 characters)',
  'tasks/*/total_item_weight': 'The task’s total item weight, in `total_weight_unit`',
  'tasks/*/total_weight_unit': 'The weight unit (kg, lb …; up to 10 characters)',
  'tasks/*/total_item_volume': 'The task’s total item volume, in `total_volume_unit`',
  'tasks/*/total_volume_unit': 'The volume unit (m3, l …; up to 10 characters)',
  'tasks/*/total_item_count': 'How many items the task carries',
  'tasks/*/client_time_utc': 'The client’s clock when it wrote the task (ISO 8601 with an offset)',
  'tasks/*/client_timezone': 'The client’s IANA time zone',
  'tasks/*/from_address': 'Where the task starts (pick-up)',
  'tasks/*/from_address/street_address': 'Street and number (up to 500 characters)',
  'tasks/*/from_address/city': 'City (up to 200 characters)',
  'tasks/*/from_address/state': 'State or province, or null',
  'tasks/*/from_address/country': 'Country (up to 100 characters)',
  'tasks/*/from_address/zip_code': 'Postal code, a number or a string (up to 20 characters), or null',
  'tasks/*/from_address/building_name': 'Building name, or null',
  'tasks/*/from_address/latitude': 'WGS 84 latitude in degrees, -90 to 90 (the planner matches drivers by it)',
  'tasks/*/from_address/longitude': 'WGS 84 longitude in degrees, -180 to 180',
  'tasks/*/from_time_window': 'When the pick-up may happen',
  'tasks/*/from_time_window/start_time_utc': 'The window’s start (ISO 8601 with an offset)',
  'tasks/*/from_time_window/end_time_utc': 'The window’s end (ISO 8601 with an offset)',
  'tasks/*/from_time_window/start_timezone': 'The start’s IANA time zone',
  'tasks/*/from_time_window/end_timezone': 'The end’s IANA time zone',
  'tasks/*/to_address': 'Where the task ends (drop-off)',
  'tasks/*/to_address/street_address': 'Street and number (up to 500 characters)',
  'tasks/*/to_address/city': 'City (up to 200 characters)',
  'tasks/*/to_address/state': 'State or province, or null',
  'tasks/*/to_address/country': 'Country (up to 100 characters)',
  'tasks/*/to_address/zip_code': 'Postal code, a number or a string (up to 20 characters), or null',
  'tasks/*/to_address/building_name': 'Building name, or null',
  'tasks/*/to_address/latitude': 'WGS 84 latitude in degrees, -90 to 90 (the planner matches drivers by it)',
  'tasks/*/to_address/longitude': 'WGS 84 longitude in degrees, -180 to 180',
  'tasks/*/to_time_window': 'When the drop-off may happen',
  'tasks/*/to_time_window/start_time_utc': 'The window’s start (ISO 8601 with an offset)',
  'tasks/*/to_time_window/end_time_utc': 'The window’s end (ISO 8601 with an offset)',
  'tasks/*/to_time_window/start_timezone': 'The start’s IANA time zone',
  'tasks/*/to_time_window/end_timezone': 'The end’s IANA time zone',
};

/** `fields` entries for the members of `fields`, each key under `prefix`. */
const under = (prefix: string, fields: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(fields).map(([key, text]) => [`${prefix}/${key}`, text]));

export const planningDocs: AreaDocs = {
  P1: {
    description: 'Lists the plannings of the caller’s organisation (SysAdmin: any, or `org_id`’s), one page at a time.',
    example: {
      query: {
        per_page: '50',
        order: 'desc',
      },
    },
    fields: {
      'query/org_id': 'SysAdmin: only this organisation’s plannings',
    },
  },
  P2: {
    description:
      'Creates an empty planning in the caller’s organisation; add runsheets (P5) and drivers (P7), then ' +
      'start it (P9).',
    example: {
      body: {
        name: 'Monday west deliveries',
      },
    },
    fields: {
      'body/name': 'The planning’s name (1 to 200 characters, one line)',
    },
  },
  P3: {
    description: 'Reads a planning with its runsheets, drivers, `version_rev` and current job.',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
      },
    },
  },
  P4: {
    description: 'Renames a planning; `version_rev` must be the current one (else 409).',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
      },
      body: {
        name: 'Monday west, second wave',
        version_rev: EXAMPLE.versionRev,
      },
    },
    fields: {
      'body/name': 'The planning’s name (1 to 200 characters, one line)',
      'body/version_rev': 'The planning’s current `version_rev` (from P2/P3): a stale one is 409',
    },
  },
  P5: {
    description:
      'Adds runsheets with their tasks; a runsheet whose id the planning already has is replaced. At most 90 ' +
      'runsheets and 1 000 `task_ids` in one call; a planning holds at most what P3 answers in one reply (5.5 MB ' +
      'of runsheets as the answer carries them): a call past that is a 400 at `runsheets`, before anything is written.',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
      },
      body: {
        runsheets: [
          {
            id: 'RS-2',
            name: 'West loop',
            tasks: [
              {
                id: 'T-100',
                total_item_count: 2,
                from_address: {
                  street_address: '10 Anson Rd',
                  city: 'Singapore',
                  country: 'SG',
                  latitude: 1.276,
                  longitude: 103.846,
                },
                to_address: {
                  street_address: '20 Collyer Quay',
                  city: 'Singapore',
                  country: 'SG',
                },
              },
            ],
          },
        ],
      },
    },
    fields: {
      ...under('body/runsheets/*', RUNSHEET),
      'body/runsheets': 'Runsheets to add (1 to 90 a call); a runsheet whose id the planning has replaces it',
      'body/runsheets/*/task_ids':
        'Instead of `tasks`: ids of imported tasks (X10) the runsheet holds, in this order (at most 200 a runsheet, ' +
        'and 1 000 over all the call’s runsheets: the runsheet whose ids pass 1 000 is a 400 at its `task_ids`); ' +
        'every id is checked before any task is marked: an unknown one is a 400 at its path, a task in a runsheet ' +
        'of another planning, or of an import that has not completed yet, a 409 at its path',
      'body/runsheets/*/service_type':
        'The kind of vehicle the runsheet needs (one of the drivers’ service types): only drivers who list it, or ' +
        'list none, are offered it (contract 4.7)',
    },
  },
  P6: {
    description: 'Removes one runsheet from the planning.',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
        runsheetID: 'RS-1',
      },
    },
    fields: {
      'params/runsheetID': 'The runsheet’s id, as added',
    },
  },
  P7: {
    description: 'Adds drivers: users of the planning’s organisation with a driver role, or freelance drivers.',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
      },
      body: {
        drivers: [
          {
            id: EXAMPLE.newDriverID,
          },
        ],
      },
    },
    fields: {
      'body/drivers': 'Drivers to add (1 to 90 a call)',
      'body/drivers/*/id': 'A driver user’s id (the planning’s organisation, or a freelance driver)',
    },
  },
  P8: {
    description: 'Removes one driver from the planning.',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
        driverID: EXAMPLE.driverID,
      },
    },
    fields: {
      'params/driverID': 'The driver user’s id',
    },
  },
  P9: {
    description:
      'Starts the planning job: pairs each runsheet with its nearest located drivers, records the pairs ' +
      'and broadcasts the offers. `version_rev` must be current; follow it with P12. A planning without ' +
      'runsheets or without drivers is a 409 whose `detail` says which is missing (a job would offer nothing).',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
      },
      body: {
        version_rev: EXAMPLE.versionRev,
        max_candidates: 3,
        offer_ttl_s: 600,
        max_waves: 3,
        max_runsheets_per_driver: 2,
        max_location_age_s: 900,
      },
    },
    fields: {
      'body/version_rev': 'The planning’s current `version_rev` (from P2/P3): a stale one is 409',
      'body/max_candidates': 'How many nearest drivers each runsheet is offered to (1 to 50, default 5)',
      'body/offer_ttl_s': 'How long an offer stays open, in seconds (5 to 86400, default 900)',
      'body/max_waves':
        'How many waves of offers a runsheet gets at most before it is marked unassigned (1 to 10, default 3; ' +
        'the job’s pairing is wave 1)',
      'body/max_runsheets_per_driver':
        'How many runsheets of this planning one driver may win (1 to 50, default 1); a driver who has won ' +
        'that many is offered no more',
      'body/max_location_age_s':
        'How old (by the service’s clock) a driver’s location may be for the driver to be offered a runsheet ' +
        'that has coordinates, in seconds (60 to 86400, default 1800)',
    },
  },
  P10: {
    description: 'Stores the planning job’s one result (the planning worker’s report); a second is 409.',
    example: {
      params: {
        planningID: EXAMPLE.planningID,
      },
      body: {
        planning_job_id: EXAMPLE.planningJobID,
        total_pairs_counted: 3,
        total_runsheets_counted: 1,
        total_drivers_counted: 3,
        start_time: '2026-12-01T08:00:00Z',
        end_time: '2026-12-01T08:00:05Z',
      },
    },
    fields: {
      'body/planning_job_id': 'The planning job’s id (P3 `job.id`)',
      'body/total_pairs_counted': 'Runsheet–driver pairs made',
      'body/total_runsheets_counted': 'Runsheets planned',
      'body/total_drivers_counted': 'Drivers considered',
      'body/start_time': 'When the job started (ISO 8601 with an offset)',
      'body/end_time': 'When the job ended (ISO 8601 with an offset)',
    },
  },
  P11: {
    description: 'Reads the planning job’s result (404 until there is one).',
    example: {
      params: {
        planningID: EXAMPLE.completedID,
      },
    },
  },
  P12: {
    description: 'Reads the planning job’s status (queued, processing, completed, failed or cancelled).',
    example: {
      params: {
        planningID: EXAMPLE.plannedID,
      },
    },
  },
  P13: {
    description: 'Moves the planning job from queued to processing (the planning worker).',
    example: {
      params: {
        planningID: EXAMPLE.plannedID,
      },
    },
  },
  P14: {
    description: 'Moves the planning job from processing to completed (the planning worker).',
    example: {
      params: {
        planningID: EXAMPLE.plannedID,
      },
    },
  },
  P15: {
    description: 'Moves the planning job to failed (the planning worker).',
    example: {
      params: {
        planningID: EXAMPLE.plannedID,
      },
    },
  },
  P16: {
    description: 'Cancels the planning job; a finished job answers 409.',
    example: {
      params: {
        planningID: EXAMPLE.plannedID,
      },
    },
  },
  R1: {
    description: 'Reads the broadcast record of one runsheet–driver pair: its state and every status change.',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
        pair_id: EXAMPLE.pairID,
      },
    },
  },
  R2: {
    description:
      'Lists the broadcast records of a plan (a planning whose job ran), one per runsheet–driver pair, by pair id: ' +
      'up to 1 000 a page (`per_page`), each with its runsheet’s tasks; a page ends early before its answer passes ' +
      '6 MB and `meta.next_page_token` leads on.',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
      },
    },
  },
  R3: {
    description: 'Records that the planning job created a runsheet–driver pair (the record worker).',
    example: {
      body: {
        pair: {
          id: EXAMPLE.pairID,
          runsheet: {
            id: 'RS-1',
            name: 'West loop',
            tasks: [],
          },
          driver: {
            id: EXAMPLE.driverID,
            name: 'Ada Lovelace',
          },
        },
        plan: {
          id: EXAMPLE.completedID,
          name: 'Docs planning',
        },
        happened_at_utc: '2026-12-01T08:00:01Z',
      },
    },
    fields: {
      ...under('body/pair/runsheet', RUNSHEET),
      'body/pair': 'The pair the job created',
      'body/pair/id': 'The pair’s id',
      'body/pair/runsheet': 'The pair’s runsheet, as the job took it',
      'body/pair/driver': 'The pair’s driver',
      'body/pair/driver/id': 'The driver user’s id',
      'body/pair/driver/name': 'The driver’s name (up to 200 characters)',
      'body/plan': 'The broadcast plan the pair belongs to',
      'body/plan/id': 'The plan’s id: the planning’s id',
      'body/plan/name': 'The plan’s name: the planning’s name',
    },
  },
  R4: {
    description: 'Records that a pair was deleted (the record worker).',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
        pair_id: EXAMPLE.pairID,
      },
      body: {
        happened_at_utc: '2026-12-01T08:05:00Z',
      },
    },
  },
  R5: {
    description: 'Records that a pair’s offer was broadcast to its driver (the plan worker).',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
        pair_id: EXAMPLE.pairID,
      },
      body: {
        happened_at_utc: '2026-12-01T08:00:02Z',
      },
    },
  },
  R6: {
    description: 'Records that the driver accepted the offer; the first acceptance of a runsheet wins, others are 409.',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
        pair_id: EXAMPLE.pairID,
      },
      body: {
        happened_at_utc: '2026-12-01T08:01:30Z',
      },
    },
  },
  R7: {
    description: 'Records that the driver rejected the offer.',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
        pair_id: EXAMPLE.pairID,
      },
      body: {
        happened_at_utc: '2026-12-01T08:01:30Z',
      },
    },
  },
  R8: {
    description: 'Records that the system rejected the pair (an offer expired, another driver won), with why.',
    example: {
      params: {
        plan_id: EXAMPLE.completedID,
        pair_id: EXAMPLE.pairID,
      },
      body: {
        happened_at_utc: '2026-12-01T08:15:02Z',
        reason: 'offer expired',
      },
    },
    fields: {
      'body/reason': 'Why the system rejected the pair (up to 200 characters)',
    },
  },
  X12: {
    description:
      'Lists the calling driver’s own offers (pair records, R1’s shape): open offers first, soonest to expire ' +
      'first; `state=all` adds the answered and closed ones after them, newest first. Paged like every list.',
    example: {
      query: {
        state: 'all',
      },
    },
    fields: {
      'query/state': '`broadcasted` (default): the open offers only; `all`: the history too',
    },
  },
  X14: {
    description:
      'Lists the planning’s runsheets without their tasks, each with its dispatch `status` (contract 4.7): `open`, ' +
      '`offered` (with `wave`, `offers_open`, `offer_expires_at`), `assigned` (`assigned_driver`, `assigned_at`), ' +
      '`unassigned` (`unassigned_reason`: code, a sentence for the dispatcher, waves, offers by outcome, `not_asked`: ' +
      'eligible drivers the waves never reached, drivers left out by each rule), `cancelled`. Paged; `status=` keeps the page’s runsheets of that status.',
    example: {
      params: { planningID: EXAMPLE.planningID },
      query: { status: 'open' },
    },
    fields: {
      'params/planningID': 'The planning’s id',
      'query/status': 'Only runsheets of this status (a filtered page may hold fewer than `per_page`)',
    },
  },
  X16: {
    description:
      'Gives the runsheet to a driver of the planning: the driver’s open offer is marked `assigned` (or a pair is ' +
      'written and assigned), the other open offers close (`assigned_to_other_driver`), the driver hears ' +
      '`runsheet.assigned`. 409 `runsheet_already_assigned` when someone else has it, `driver_at_capacity` at the ' +
      'driver’s limit.',
    example: {
      params: { planningID: EXAMPLE.planningID, runsheetID: 'RS-1' },
      body: { driver_id: EXAMPLE.driverID },
    },
    fields: {
      'params/planningID': 'The planning’s id',
      'params/runsheetID': 'The runsheet’s id in the planning',
      'body/driver_id': 'The driver (a driver of the planning, P7) who gets the runsheet',
    },
  },
  X17: {
    description:
      'Offers an `offered` or `unassigned` runsheet to one more wave of eligible drivers now (past `max_waves`), ' +
      'with this call’s settings if given; 409 from any other status.',
    example: {
      params: { planningID: EXAMPLE.plannedID, runsheetID: 'RS-1' },
      body: { max_candidates: 5, offer_ttl_s: 300 },
    },
    fields: {
      'params/planningID': 'The planning’s id',
      'params/runsheetID': 'The runsheet’s id in the planning',
      'body/max_candidates': 'Drivers this wave offers it to (1–50; default: the job’s)',
      'body/offer_ttl_s': 'How long this wave’s offers stay open, in seconds (5–86 400; default: the job’s)',
    },
  },
  X18: {
    description:
      'Takes the runsheet out of dispatch: its open offers close (`runsheet_cancelled`), a driver who held it hears ' +
      '`runsheet.cancelled`; never offered again. A second cancel answers the same.',
    example: {
      params: { planningID: EXAMPLE.planningID, runsheetID: 'RS-1' },
      body: { reason: 'The customer called the delivery off' },
    },
    fields: {
      'params/planningID': 'The planning’s id',
      'params/runsheetID': 'The runsheet’s id in the planning',
      'body/reason': 'Why, in the planner’s words (up to 500 characters); the driver and partners are told it',
    },
  },
  X19: {
    description:
      'The paired driver gives back a runsheet they accepted: the pair moves to `withdrawn`, the runsheet goes back ' +
      'to dispatch at once (a new wave without this driver, even past `max_waves`). Only the paired driver.',
    example: {
      params: { plan_id: EXAMPLE.completedID, pair_id: EXAMPLE.pairID },
      body: { happened_at_utc: '2026-12-01T08:20:00Z', reason: 'Flat tyre' },
    },
    fields: {
      'body/reason': 'Why, in the driver’s words (up to 500 characters)',
    },
  },
  X20: {
    description:
      'The runsheet’s assigned driver reports one of its tasks (contract 4.8): `arrived` (no status change), ' +
      '`picked_up` (from `pending`), `delivered` (from `picked_up`), `failed` (from `pending` or `picked_up`, with ' +
      '`failure_reason`; `other` needs `note`). Judged against the task’s status in arrival order; any other move is ' +
      'a 409 whose `detail` says what happened ("task T-17 was delivered at …; it cannot be picked up now"). The same ' +
      'event again (same `type` and `happened_at_utc`) is recorded once, answers 200 (the first time 201) and ' +
      'announces nothing again (no frame, no webhook). Bounds: a task’s `timeline[]` holds at most 20 events, ' +
      '`arrived` at most 3 times (past that a 409 `timeline_full`); `happened_at_utc` lies between the runsheet’s ' +
      'assignment less 5 minutes and the server’s clock plus 5 minutes, and never before the task’s previous status ' +
      'event (a 400 at `happened_at_utc`). ' +
      '`delivered` and `failed` may name up to 5 proofs declared through X21 by the same driver, uploaded as ' +
      'declared and named by no other event; each that is not is a 400 at `proof_ids[i]`. A proof’s bytes are fixed ' +
      'when the event names them: X22 serves them as they were then, whatever is PUT to its upload URL later. ' +
      'The first event moves the runsheet to `in_progress`, ' +
      'the last task delivered or failed to `completed`. Each event goes out as `task.<type>` (and ' +
      '`runsheet.completed`) on `planning.<id>` and to the organisation’s partner webhooks. Anyone but the assigned ' +
      'driver gets a 404. The runsheet is named by its id alone: if the driver holds runsheets of that id in two ' +
      'plannings, the one not completed (then the latest assigned) is meant.',
    example: {
      params: { runsheetID: 'RS-1', taskID: 'task-1' },
      body: {
        type: 'delivered',
        happened_at_utc: '2026-12-01T09:30:00Z',
        latitude: 1.3521,
        longitude: 103.8198,
        recipient_name: 'Mrs Tan',
      },
    },
    errors: {
      409:
        'The move is illegal from the task’s status (`conflict`, `detail` says what happened), the runsheet was ' +
        'cancelled, or the task’s timeline is full (`timeline_full`: 20 events, or a fourth `arrived`)',
    },
    fields: {
      'params/runsheetID': 'The runsheet’s id (as in its planning) that the caller was assigned',
      'params/taskID': 'The task’s `id` in the runsheet (an imported task’s X10 id)',
      'body/type': 'What happened: `arrived`, `picked_up`, `delivered` or `failed`',
      'body/happened_at_utc':
        'When it happened, on the phone’s clock (with the same `type`, it identifies the event): from the runsheet’s ' +
        'assignment less 5 minutes to the server’s clock plus 5 minutes, never before the task’s previous status event',
      'body/latitude': 'Where the phone was (with `longitude`)',
      'body/longitude': 'Where the phone was (with `latitude`)',
      'body/failure_reason':
        'Required for `failed`: `recipient_absent`, `address_not_found`, `refused`, `damaged`, `access_denied`, `other`',
      'body/note': 'Free text (up to 1000 characters); required when `failure_reason` is `other`',
      'body/recipient_name': 'Who took the delivery (up to 200 characters)',
      'body/proof_ids':
        'Up to 5 proofs (X21 `proof_id`s) uploaded by the caller and named by no other event; only for `delivered` ' +
        'and `failed`',
      'body/proof_ids/*': 'A proof’s id as X21 answered it',
    },
  },
  X21: {
    description:
      'Declares a proof photo before it is uploaded: its type (`image/jpeg`, `image/png`, `image/webp`) and size in ' +
      'bytes (at most 10 MiB). Answers a presigned PUT valid 15 minutes whose `Content-Type` and `Content-Length` ' +
      'are signed in: PUT exactly those bytes with that `Content-Type`. The object is kept under the organisation’s ' +
      'prefix (`proofs/<org_id>/`) for a year; name the `proof_id` in a `delivered` or `failed` event (X20). Open to ' +
      'a driver holding a runsheet `assigned` or `in_progress` (else a 409 `no_runsheet`), who holds at most 20 ' +
      'proofs not yet named by an event (else a 429 `rate_limited` with `Retry-After`: a proof stops counting once ' +
      'an event names it, or an hour after it was declared).',
    example: { body: { content_type: 'image/jpeg', size: 482_113 } },
    errors: {
      409: 'The caller holds no runsheet assigned or in progress (`no_runsheet`)',
      429:
        'The caller holds 20 proofs no event has named yet (`rate_limited`); `Retry-After` says when the oldest ' +
        'stops counting. Or API Gateway stage throttling',
    },
    fields: {
      'body/content_type': 'The photo’s type: `image/jpeg`, `image/png` or `image/webp` (the PUT must send it)',
      'body/size': 'The photo’s size in bytes, 1 to 10 485 760 (the PUT must send exactly this many)',
    },
  },
  X22: {
    description:
      'A runsheet with its status (contract 4.7/4.8: `in_progress` with `tasks_done`/`tasks_total`, `completed` ' +
      'with `completed_at`) and its tasks in order, each with its `status`, `timeline[]` (in the order events ' +
      'happened) and `proofs[]` as signed GET URLs valid 15 minutes. The planning’s readers and the runsheet’s ' +
      'assigned driver; anyone else a 404. While it is `assigned` or `in_progress` (contract 4.11), live ETAs ' +
      'computed as it is read: each task’s `eta_pickup_utc`/`eta_dropoff_utc` (when that stop’s service is ' +
      'expected to start; `null` once it is done) and `late_by_s` beside a built task’s `planned_*`, and the ' +
      'runsheet’s `eta_updated_at` and `delay_s`; reckoned from the assigned driver’s last fix at the later of its ' +
      'time and now, along the stops still to do (`stops[]` order for a built runsheet, else task order) with the ' +
      'runsheet’s travel model, waiting for windows and spending service times. Without a fix in 10 minutes every ' +
      'ETA is `null` and `eta_reason` is `no_recent_position`. Any other status: no ETA members.',
    example: { params: { planningID: EXAMPLE.planningID, runsheetID: 'RS-1' } },
    fields: {
      'params/planningID': 'The planning’s id',
      'params/runsheetID': 'The runsheet’s id in the planning',
    },
  },
};
