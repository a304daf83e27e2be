/** The imports area's operations as the OpenAPI document explains them (see lib/openapi-docs/index.ts). */
import { EXAMPLE } from '#lib/openapi-docs/examples';
import type { AreaDocs } from '#lib/openapi-docs/types';

/** The CSV format, in every import operation's description (test/unit/openapi-docs.test.ts checks it names every
 * column the parser knows). */
const IMPORT_FORMAT =
  'Files are UTF-8 CSV, comma separated, with a header row (docs/imports.md). Tasks file: required ' +
  'columns task_ref, from_street_address, from_city, from_country, to_street_address, to_city, ' +
  'to_country, from_start_time_utc, from_end_time_utc, from_timezone, to_start_time_utc, ' +
  'to_end_time_utc, to_timezone; optional from_building_name, from_state, from_zip_code, ' +
  'from_latitude, from_longitude, to_building_name, to_state, to_zip_code, to_latitude, to_longitude, ' +
  'total_item_weight, total_weight_unit, total_item_volume, total_volume_unit, notes, from_service_s, ' +
  'to_service_s (a stop’s service time for route planning, whole seconds 0–7 200). Items file: ' +
  'required task_ref (a task of the tasks file), description, quantity; optional sku, weight, ' +
  'weight_unit, volume, volume_unit. Times are ISO 8601, time zones IANA names, numbers use a decimal ' +
  'point; unknown columns are ignored with a warning. A rejected row is named by its file and the row a ' +
  'spreadsheet shows (`tasks.csv row 3 (task_ref T2): …`, the header being row 1). Sample files of every format: ' +
  'examples/ in the repository.';

/** The `files[]` of I4a and I4b: uploads made through I1, named by their key. */
const UPLOADED_FILES = {
  'body/files': 'One tasks file and at most one items file (CSV; the header row tells which is which)',
  'body/files/*/file_name': 'The file’s name as shown in the job (up to 200 characters)',
  'body/files/*/file_size': 'Accepted and ignored: the service reads it from the stored upload',
  'body/files/*/storage_upload_bucket': 'Accepted and ignored: the service reads it from the stored upload',
  'body/files/*/storage_upload_key':
    'I1’s `file.storage_upload_key`, after the file was PUT to its `file.url`: one of your ' + 'organisation’s uploads',
  'body/files/*/url': 'Accepted and ignored: the service reads it from the stored upload',
  'body/files/*/checksum': 'Accepted and ignored: the service reads it from the stored upload',
  'body/files/*/checksum_method': 'Accepted and ignored: the service reads it from the stored upload',
};

/**
 * The organisation family's operations (I1 … I12). Their operations-staff twins (`I1.ops` …, under /v1/admin) read
 * the same, but where I2.ops and I3.ops say more below.
 */
const organisationFamily = {
  I1: {
    description:
      'A presigned S3 PUT URL, valid for one hour, for one import file. PUT the file’s bytes to ' +
      '`file.url` with the header `Content-Type: text/csv` (the URL signs it: S3 refuses another type), then name ' +
      '`file.storage_upload_key` in I4a/I4b. ' +
      IMPORT_FORMAT,
    example: {
      query: {
        filename: 'tasks.csv',
      },
    },
    fields: {
      'query/filename': 'The name of the file to upload (1 to 200 characters), e.g. tasks.csv',
    },
  },
  I2: {
    description: 'Lists the caller’s organisation’s import jobs by creation time, one page at a time.',
    example: {
      query: {
        per_page: '50',
        order: 'desc',
      },
    },
  },
  I3: {
    description:
      'Creates an import job from files sent in the request itself: multipart/form-data, the field `files` ' +
      'once per file (one tasks file, at most one items file), at most 4 500 000 bytes in all (413 above; what fits ' +
      'Lambda once base64-encoded). Larger files go through I1 and I4a/I4b. ' +
      IMPORT_FORMAT,
    errors: {
      413: 'The upload is larger than 4 500 000 bytes (`payload_too_large`): upload through I1 and create the job with I4b',
      415: 'The body is not multipart/form-data (`unsupported_media_type`)',
    },
    multipart: 'files',
  },
  I5: {
    description: 'Reads one import job: its files, status and timestamps.',
    example: {
      params: {
        import_job_id: EXAMPLE.importJobID,
      },
    },
  },
  I6: {
    description:
      'Queues the job for the import worker (status new → queued). With `dry_run=true` the worker checks ' +
      'every row and writes the result (I7) but imports nothing. ' +
      IMPORT_FORMAT,
    example: {
      params: {
        import_job_id: EXAMPLE.importJobID,
      },
      query: {
        dry_run: 'true',
      },
    },
    fields: {
      'query/dry_run': 'true: check the files and report what would be imported, importing nothing',
    },
  },
  I7: {
    description:
      'Reads the job’s result: counts of rows read, imported and rejected, one `errors[]` string per ' +
      'rejected row, and warnings. 404 until the worker has written it. A result is at most 1 MiB: `errors[]` ' +
      'keeps the first 1 000 rejected rows (fewer only if their strings would pass 1 MiB), each string at most 500 ' +
      'characters with its `task_ref` cut to 64 (a cut ends with `…`); `warnings[]` the first 100. `errors_total` ' +
      'is how many errors there were, and `errors_truncated` is true when `errors[]` holds fewer. The same for a dry run.',
    example: {
      params: {
        import_job_id: EXAMPLE.importedJobID,
      },
    },
  },
  I9: {
    description:
      'Reads the job’s import status (new, queued, processing, completed or failed) and, for a failed job, its ' +
      '`error` (null otherwise). `id` is the status record’s own id; the job’s is `task_import_job_id`.',
    example: {
      params: {
        import_job_id: EXAMPLE.importJobID,
      },
    },
  },
  I10: {
    description:
      'Moves the job along its status machine (new → queued → processing → completed or failed); ' +
      '`prev_status` must be the current status, otherwise 409.',
    example: {
      params: {
        import_job_id: EXAMPLE.importJobID,
      },
      body: {
        prev_status: 'new',
        next_status: 'queued',
      },
    },
    fields: {
      'body/prev_status': 'The job’s current status (the change is refused otherwise)',
      'body/next_status': 'The status to move to (new → queued → processing → completed or failed)',
    },
  },
  I11: {
    description: 'Marks the job failed with a reason (shown as its error); a finished job answers 409.',
    example: {
      params: {
        import_job_id: EXAMPLE.importJobID,
      },
      body: {
        reason: 'The tasks file was replaced',
      },
    },
    fields: {
      'body/reason': 'Why the job failed, shown as its error (up to 500 characters)',
    },
  },
  I12: {
    description: 'Stores the job’s one result (the import worker’s report); a second result is 409.',
    example: {
      params: {
        import_job_id: EXAMPLE.importJobID,
      },
      body: {
        file_import_results: [
          {
            file_name: 'tasks.csv',
            rows: 2,
          },
        ],
        total_tasks_counted: 2,
        total_tasks_imported: 1,
        total_tasks_rejected: 1,
        total_items_counted: 0,
        total_items_imported: 0,
        total_items_rejected: 0,
        errors: ['tasks.csv row 3 (task_ref T2): from_street_address: is required'],
        warnings: [],
      },
    },
    fields: {
      'body/id': 'Ignored: the service names the result',
      'body/task_import_job_id': 'Ignored: the path names the job',
      'body/file_import_results': 'One free-form object per file (at most 10)',
      'body/total_tasks_counted': 'Task rows read',
      'body/total_tasks_imported': 'Task rows imported',
      'body/total_tasks_rejected': 'Task rows rejected',
      'body/total_items_counted': 'Item rows read',
      'body/total_items_imported': 'Item rows imported',
      'body/total_items_rejected': 'Item rows rejected',
      'body/errors': 'One string per rejected row, naming its problems',
      'body/warnings': 'What is worth telling but rejected nothing (ignored columns …)',
      'body/server_time': 'Ignored: the service records its own time',
      'body/org_id': 'Ignored: the job names its organisation',
    },
  },
} satisfies AreaDocs;

const opsTwins = Object.fromEntries(Object.entries(organisationFamily).map(([id, docs]) => [`${id}.ops`, docs]));

export const importsDocs: AreaDocs = {
  ...organisationFamily,
  ...opsTwins,
  'I2.ops': {
    ...organisationFamily.I2,
    description: 'Lists import jobs of every organisation, or only of those `org_id` names, one page at a time.',
    fields: {
      'query/org_id': 'Only these organisations’ jobs: UUIDs, comma-separated or the parameter repeated (at most 20)',
    },
  },
  'I3.ops': {
    ...organisationFamily.I3,
    multipartFields: { org_id: 'The organisation the tasks are for (its id)' },
  },
  I4a: {
    description:
      'Creates an import job (status new) for the organisation `org_id` names, from files uploaded through ' +
      'I1.ops. Requires `broadcast_preference` and `service_type` (the vehicle the tasks need, kept on the job); ' +
      'no service window. ' +
      IMPORT_FORMAT,
    example: {
      body: {
        files: [
          {
            storage_upload_key: EXAMPLE.uploadKey,
            file_name: 'tasks.csv',
          },
        ],
        org_id: EXAMPLE.orgID,
        broadcast_preference: 'nearest_driver',
        service_type: 'van_1.7m',
        client_timezone: 'Asia/Singapore',
      },
    },
    fields: {
      ...UPLOADED_FILES,
      'body/org_id': 'The organisation the tasks are imported for',
      'body/broadcast_preference': 'How the imported tasks are broadcast to drivers (free text, 1 to 100 characters)',
      'body/cargo_net_quantity': 'The cargo’s net quantity (free text)',
      'body/officer_contact': 'Who to call about this import',
      'body/officer_contact/name': 'The officer’s name',
      'body/officer_contact/phone': 'The officer’s phone number',
      'body/service_type':
        'The vehicle the imported tasks need (ltl, motorcycle, car, mpv, van_1.7m, van_2.4m, lorry_10ft, lorry_14ft, ' +
        'lorry_24ft, lorry_40ft)',
      'body/client_time_utc': 'The client’s clock when it sent this (ISO 8601 with an offset)',
      'body/client_timezone': 'The client’s IANA time zone, e.g. Asia/Singapore',
    },
  },
  I4b: {
    description:
      'Creates an import job (status new) for the caller’s organisation from files uploaded through I1; ' +
      'start it with I6. Requires the job’s service window (`start_time`/`end_time` with their IANA zones: the day ' +
      'or shift the import is for; it is kept on the job and does not bound the rows’ own windows; `end_time` ' +
      'before `start_time` is a 400) and `service_type` (the vehicle the tasks need, kept on the job; dispatch ' +
      'matches a runsheet’s own P5 `service_type` against drivers’ `driver_profile.service_types`). ' +
      IMPORT_FORMAT,
    example: {
      body: {
        files: [
          {
            storage_upload_key: EXAMPLE.uploadKey,
            file_name: 'tasks.csv',
          },
        ],
        start_timezone: 'Asia/Singapore',
        start_time: '2026-12-01T08:00:00+08:00',
        end_timezone: 'Asia/Singapore',
        end_time: '2026-12-01T18:00:00+08:00',
        service_type: 'van_1.7m',
      },
    },
    fields: {
      ...UPLOADED_FILES,
      'body/start_timezone': 'The IANA time zone of `start_time`, e.g. Asia/Singapore',
      'body/start_time':
        'When the job’s service window starts: the day or shift the import is for (ISO 8601 with an offset). ' +
        'Kept on the job; each row keeps its own pickup and delivery windows',
      'body/end_timezone': 'The IANA time zone of `end_time`',
      'body/end_time': 'When the service window ends (ISO 8601 with an offset; not before `start_time`)',
      'body/service_type':
        'The vehicle the imported tasks need (ltl, motorcycle, car, mpv, van_1.7m, van_2.4m, lorry_10ft, lorry_14ft, ' +
        'lorry_24ft, lorry_40ft)',
      'body/client_time_utc': 'The client’s clock when it sent this (ISO 8601 with an offset)',
      'body/client_timezone': 'The client’s IANA time zone, e.g. Asia/Singapore',
    },
  },
  I8: {
    description:
      'Downloads an object the caller’s organisation owns (an import file or result): small files as ' +
      'bytes, large ones (over 4 700 000 bytes) as a 302 to a presigned link valid five minutes. Always a download: ' +
      "`Content-Disposition: attachment` with the file name (`filename*=UTF-8''…` too for a name that is not ASCII), " +
      '`X-Content-Type-Options: nosniff`, and the type the service fixes, never the uploader’s: `text/csv` for an ' +
      'import file, `application/json` for a result; the presigned link signs the same type and disposition. ' +
      'Failures are `{"Error": …}` (the spec’s shape).',
    example: {
      query: {
        bucket: EXAMPLE.bucket,
        object_key: EXAMPLE.uploadKey,
      },
    },
    fields: {
      'query/bucket': 'The bucket the object is in',
      'query/object_key': 'The object key, `uploads/<org_id>/…` for an organisation’s files',
    },
  },
  X10: {
    description:
      'Lists the organisation’s imported tasks, newest import first (`order=asc`: oldest first, in file order), ' +
      'each with the planning and runsheet it is in, if any. Items are left out: X11 reads one task with its items.',
    example: {
      query: {
        planned: 'false',
        order: 'asc',
      },
    },
    fields: {
      'query/import_job_id': 'Only the tasks of this import job',
      'query/planned': '`true`: only tasks in a runsheet of a planning; `false`: only tasks in none',
      'query/org_id': 'The organisation whose tasks to list (SysAdmin only, and required for a SysAdmin)',
    },
  },
  X11: {
    description: 'Reads one imported task with its items, and the planning and runsheet it is in, if any.',
    example: {
      params: {
        taskID: EXAMPLE.taskID,
      },
    },
    fields: {
      'params/taskID': 'The task’s id (24 hexadecimal characters, as X10 lists it)',
    },
  },
  X27: {
    description:
      'Makes a tracking link for the task’s recipient (201), or shows the one it has (200, the same `url`) while it ' +
      'works. Give `url` to the recipient: it opens a page (`/track/<token>`) with what X29 shows, refreshed every ' +
      '30 seconds, no account needed. The link works 7 days after it was made, and stops 24 hours after the task is ' +
      'delivered, failed or cancelled; X28 revokes it at once, and X27 then makes a new one. The token is 256 bits, ' +
      'stored hashed (docs/tracking.md).',
    example: { params: { taskID: EXAMPLE.taskID } },
    fields: { 'params/taskID': 'The task’s id (24 hexadecimal characters, as X10 lists it)' },
  },
  X28: {
    description:
      'Revokes the task’s tracking link: X29 and the page answer 404 from now on. A task without a link answers 200 ' +
      'too (its `message` says so); a later X27 makes a new link.',
    example: { params: { taskID: EXAMPLE.taskID } },
    fields: { 'params/taskID': 'The task’s id (24 hexadecimal characters, as X10 lists it)' },
  },
  X29: {
    description:
      'What the recipient of a tracking link may see, with no account: the organisation’s name, the task’s ' +
      '`task_ref`, its `status` (`scheduled`; `on_the_way` while its drop-off is the driver’s next stop; `delivered`; ' +
      '`failed` with the failure reason’s code; `cancelled`), the drop-off’s window and city, its ETA to the minute ' +
      '(contract 4.11), the driver’s first name, and the driver’s position to 3 decimals only while `on_the_way`. ' +
      'Nothing of another task or stop. An unknown, revoked or expired token is the same 404.',
    example: { params: { token: EXAMPLE.trackingToken } },
    errors: {
      429: 'More than 60 requests a minute for this token, or from this address (`Retry-After` says when to ask again)',
    },
    fields: { 'params/token': 'The token of the link X27 made (the last part of its `url`)' },
  },
};
