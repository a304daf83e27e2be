import * as v from 'valibot';
import { isSafeObjectKey, UNSAFE_KEY_MESSAGE } from '#shared/imports/object-keys';
import { MAX_FILE_RESULTS_BYTES } from '#shared/imports/result-bounds';
import { ianaTimezone } from '#shared/locations/schemas';
import { taskProgressEntries } from '#shared/planning/schemas';
import {
  counter,
  dateTime,
  forwardTo,
  isoTime,
  objectId,
  order,
  pageQuery,
  rangedListQuery,
  rangePageMeta,
  recordKey,
  SERVICE_TYPES,
  uuid,
} from '#shared/schemas/common';

const serviceType = v.picklist(SERVICE_TYPES, `must be one of ${SERVICE_TYPES.join(', ')}`);
const shortText = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max));

export const uploadUrlQuery = v.object({
  filename: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(200)),
});

const fileData = v.object({
  file_name: v.optional(shortText(200)),
  file_size: v.optional(v.nullable(v.number())),
  storage_upload_bucket: v.optional(shortText(63)),
  storage_upload_key: v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(1024),
    v.check(isSafeObjectKey, UNSAFE_KEY_MESSAGE),
  ),
  url: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2048, 'must be at most 2048 characters')))),
  checksum: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(128, 'must be at most 128 characters')))),
  checksum_method: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(32, 'must be at most 32 characters')))),
});
const files = v.pipe(
  v.array(fileData, 'must be an array of files'),
  v.minLength(1, 'must name a tasks file'),
  v.maxLength(2, 'must name at most a tasks file and an items file'),
);
const clientTime = { client_time_utc: v.optional(dateTime), client_timezone: v.optional(ianaTimezone) };

/** I4a (family 1). */
export const createOpsJobBody = v.object({
  files,
  org_id: uuid,
  broadcast_preference: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(100)),
  cargo_net_quantity: v.optional(v.nullable(shortText(100))),
  officer_contact: v.optional(
    v.nullable(v.object({ name: v.optional(shortText(200)), phone: v.optional(shortText(50)) })),
  ),
  service_type: serviceType,
  ...clientTime,
});

/**
 * I4b (family 2). The window's order is checked with the fields (`partialCheck` runs whenever the two times are
 * valid, whatever else fails), so one answer names every problem of the request, as the CSV rows do (issue 46.11).
 */
export const createOrgJobBody = v.config(
  v.pipe(
    // The fields as everywhere (their pipes stop at their first problem); the window's check after them, even then.
    v.config(
      v.object({
        files,
        start_timezone: ianaTimezone,
        start_time: dateTime,
        end_timezone: ianaTimezone,
        end_time: dateTime,
        service_type: serviceType,
        ...clientTime,
      }),
      { abortPipeEarly: true },
    ),
    forwardTo(
      v.partialCheck(
        [['start_time'], ['end_time']],
        (body) => !(Date.parse(body.end_time) < Date.parse(body.start_time)),
        'must not be before start_time',
      ),
      ['end_time'],
    ),
  ),
  { abortPipeEarly: false },
);

export const jobParams = v.object({ import_job_id: objectId });
export const startQuery = v.object({
  dry_run: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((s) => s === 'true'),
    ),
    'false',
  ),
});

export const listOrgJobsQuery = rangedListQuery({});
export const listOpsJobsQuery = rangedListQuery({
  // Repeated (`org_id=a&org_id=b`, which API Gateway joins with commas) or comma-separated.
  org_id: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) =>
        s
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean),
      ),
      v.array(v.pipe(v.string(), v.uuid('must be organisation UUIDs'), v.maxLength(36, 'must be organisation UUIDs'))),
      v.maxLength(20, 'must name at most 20 organisations'),
    ),
  ),
});

const status = v.picklist(
  ['new', 'queued', 'processing', 'completed', 'failed'],
  'must be new, queued, processing, completed or failed',
);
export const statusChangeBody = v.object({ prev_status: status, next_status: status });
export const failBody = v.object({ reason: v.optional(shortText(500)) });

/** I12: a result submitted by an import worker. */
export const resultBody = v.object({
  id: v.optional(v.pipe(v.string(), v.maxLength(64))),
  task_import_job_id: v.optional(objectId),
  file_import_results: v.pipe(
    v.array(v.record(recordKey, v.unknown())),
    v.maxLength(10),
    v.check(
      (files) => Buffer.byteLength(JSON.stringify(files)) <= MAX_FILE_RESULTS_BYTES,
      `must be at most ${MAX_FILE_RESULTS_BYTES} bytes as JSON (a result is at most 1 MiB)`,
    ),
  ),
  total_tasks_counted: counter,
  total_tasks_imported: counter,
  total_tasks_rejected: counter,
  total_items_counted: counter,
  total_items_imported: counter,
  total_items_rejected: counter,
  errors: v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(100_000)),
  warnings: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(2000))), v.maxLength(100))),
  server_time: v.optional(dateTime),
  org_id: v.optional(v.nullable(uuid)),
});

// Responses
const fileView = v.object({
  file_name: v.string(),
  file_size: v.nullable(v.number()),
  storage_upload_bucket: v.string(),
  storage_upload_key: v.string(),
  url: v.string(),
  checksum: v.nullable(v.string()),
  checksum_method: v.string(),
});
export const uploadUrlReply = v.object({ file: fileView, server_time: isoTime });
/** A job's reply: the spec's Task import job plus, by family, the details its creation took (I4a, I4b, I3). */
export const jobView = v.object({
  id: v.string(),
  upload_record: v.object({
    id: v.string(),
    files: v.array(fileView),
    client_time_utc: v.nullable(isoTime),
    client_timezone: v.nullable(v.string()),
    server_time: isoTime,
  }),
  current_status: v.nullable(status),
  status_updated_at: isoTime,
  last_executed_at_client_time_utc: v.nullable(isoTime),
  last_executed_at_client_timezone: v.nullable(v.string()),
  last_executed_at_server_time: v.nullable(isoTime),
  server_time: isoTime,
  org_id: v.nullable(uuid),
  created_at: isoTime,
  dry_run: v.boolean(),
  error: v.optional(v.string()),
  service_type: v.optional(v.string()),
  broadcast_preference: v.optional(v.string()),
  cargo_net_quantity: v.optional(v.nullable(v.string())),
  officer_contact: v.optional(v.nullable(v.object({ name: v.optional(v.string()), phone: v.optional(v.string()) }))),
  start_timezone: v.optional(v.string()),
  start_time: v.optional(isoTime),
  end_timezone: v.optional(v.string()),
  end_time: v.optional(isoTime),
});
export const jobList = v.object({
  meta: rangePageMeta,
  task_import_jobs: v.array(jobView),
});
export const statusRecord = v.object({
  id: v.pipe(
    v.string(),
    v.description(
      'The status record’s own id (the spec’s Import status record), not the job’s: that is task_import_job_id',
    ),
  ),
  import_status: status,
  file_upload_record_id: v.string(),
  task_import_job_id: v.pipe(v.string(), v.description('The import job’s id, as in the path')),
  /** Beyond the spec's four, as I5 has it: why a failed job failed. */
  error: v.pipe(
    v.nullable(v.string()),
    v.description(
      'Why the job failed, prefixed with the file’s name (the same text as I5’s `error`); null unless failed',
    ),
  ),
  /** Beyond the spec's four: when the status last changed, and every change (as a planning job's `statuses`). */
  status_updated_at: isoTime,
  statuses: v.array(v.object({ status, set_at_utc: isoTime })),
});
export const resultView = v.object({
  id: v.string(),
  task_import_job_id: v.string(),
  // Open by design: each entry is the file data plus what the worker reported of it (spec: "file data plus …").
  file_import_results: v.array(v.record(v.string(), v.unknown())),
  total_tasks_counted: v.number(),
  total_tasks_imported: v.number(),
  total_tasks_rejected: v.number(),
  total_items_counted: v.number(),
  total_items_imported: v.number(),
  total_items_rejected: v.number(),
  errors: v.array(v.string()),
  errors_total: v.pipe(
    v.number(),
    v.description('How many errors there were (rejected rows, or the one problem that failed the job)'),
  ),
  errors_truncated: v.pipe(
    v.boolean(),
    v.description(
      'true when `errors[]` holds fewer than `errors_total`: it keeps the first 1 000 (contract 4.9: a result is at most 1 MiB)',
    ),
  ),
  warnings: v.array(v.string()),
  server_time: isoTime,
  org_id: v.nullable(v.string()),
  /** A dry run's result says so (contract 4.5). */
  dry_run: v.optional(v.boolean()),
});

/** S3's own limits: a bucket name is at most 63 characters, an object key at most 1 024 bytes. */
export const MAX_BUCKET_NAME = 63;
export const MAX_OBJECT_KEY = 1024;
/** I8's query, documented only: the handler reads it itself so that its failures keep the spec's `{"Error": …}`. */
export const downloadQuery = v.object({
  bucket: v.pipe(v.string(), v.maxLength(MAX_BUCKET_NAME), v.description('The bucket the object is in')),
  object_key: v.pipe(
    v.string(),
    v.maxLength(MAX_OBJECT_KEY),
    v.description('The object key, `uploads/<org_id>/…` for an organisation’s files'),
  ),
});
export const downloadFailure = v.object({ Error: v.string() });

// Imported tasks (X10, X11)
export const listTasksQuery = v.object({
  ...pageQuery(200, 1000),
  order,
  import_job_id: v.optional(objectId),
  planned: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((s) => s === 'true'),
    ),
  ),
  /** SysAdmin names the organisation; another role may name only its own. */
  org_id: v.optional(uuid),
});
export const taskParams = v.object({ taskID: objectId });

const importedAddress = v.object({
  building_name: v.nullable(v.string()),
  street_address: v.string(),
  city: v.string(),
  state: v.nullable(v.string()),
  country: v.string(),
  zip_code: v.nullable(v.string()),
  latitude: v.optional(v.number()),
  longitude: v.optional(v.number()),
});
const importedWindow = v.object({
  start_time_utc: isoTime,
  end_time_utc: isoTime,
  start_timezone: v.string(),
  end_timezone: v.string(),
});
/** An imported task as X10 lists it: the spec's Task as imported, plus task_ref, import_job_id, notes, its place. */
const listedTaskEntries = {
  id: v.string(),
  task_ref: v.string(),
  import_job_id: v.string(),
  from_address: importedAddress,
  to_address: importedAddress,
  from_time_window: importedWindow,
  to_time_window: importedWindow,
  total_item_weight: v.nullable(v.number()),
  total_weight_unit: v.nullable(v.string()),
  total_item_volume: v.nullable(v.number()),
  total_volume_unit: v.nullable(v.string()),
  total_item_count: v.nullable(v.number()),
  client_time_utc: v.nullable(isoTime),
  client_timezone: v.nullable(v.string()),
  notes: v.nullable(v.string()),
  /** Contract 4.5: a stop's service time for route planning (4.10), in whole seconds; null when the file gave none. */
  from_service_s: v.nullable(v.number()),
  to_service_s: v.nullable(v.number()),
  created_at: v.nullable(isoTime),
  planning_id: v.nullable(v.string()),
  runsheet_id: v.nullable(v.string()),
  /** Contract 4.8: as its runsheet's driver reports it (X20). */
  ...taskProgressEntries,
};
export const taskList = v.object({
  tasks: v.array(v.object(listedTaskEntries)),
  meta: v.object({ page: v.number(), per_page: v.number(), next_page_token: v.nullable(v.string()) }),
});
export const taskReply = v.object({
  task: v.object({
    ...listedTaskEntries,
    items: v.array(
      v.object({
        id: v.string(),
        sku: v.nullable(v.string()),
        description: v.string(),
        quantity: v.number(),
        weight: v.nullable(v.number()),
        weight_unit: v.nullable(v.string()),
        volume: v.nullable(v.number()),
        volume_unit: v.nullable(v.string()),
      }),
    ),
  }),
});
