/** Creating import jobs: from uploaded files (I4a, I4b), from a multipart upload through the API (I3), and I12. */
import busboy from 'busboy';
import { requireOrganisation } from '#shared/accounts/organisations';
import type { Caller } from '#shared/auth/caller';
import { clock, toUtcIso } from '#shared/clock';
import { type DomainError, invalidAt, tooLarge, unsupportedMediaType } from '#shared/errors';
import { newObjectId } from '#shared/ids';
import {
  createJob,
  type FileData,
  type ImportResult,
  saveResult,
  toJobView,
  toResultView,
  visibleJob,
} from '#shared/imports/jobs';
import { checkJobFiles, OPS_SCOPE, storeUpload, uploadScope } from '#shared/imports/uploads';

/**
 * I3's one limit, of the whole multipart body. API Gateway hands a multipart body to the function base64-encoded
 * inside the event, and Lambda takes an event of at most 6 291 556 bytes: 4 500 000 bytes become 6 000 000, which
 * leaves room for the event's headers and context. Over this limit the platform, not the function, would refuse.
 */
export const MAX_MULTIPART_BYTES = 4_500_000;

/** I3's 413, wherever the body is measured (the local host, the function): the limit, and the way around it. */
export const uploadTooLarge = (): DomainError =>
  tooLarge(
    `a multipart upload (I3) is at most ${MAX_MULTIPART_BYTES} bytes (4.5 MB) in total: for larger files, ask ` +
      'GET …/task-import-jobs/upload-url?filename= (I1) for a presigned URL, PUT each file there (up to 50 MiB), ' +
      'then create the job from the uploaded files with POST …/task-import-jobs (I4)',
  );

type FileRef = {
  storage_upload_key: string;
  storage_upload_bucket?: string | undefined;
  file_name?: string | undefined;
};
const clientTime = (input: { client_time_utc?: string | undefined; client_timezone?: string | undefined }) => ({
  clientTimeUtc: input.client_time_utc ? toUtcIso(input.client_time_utc) : null,
  clientTimezone: input.client_timezone ?? null,
});

/** I4a: operations staff, for a named organisation (files under `ops/` or that organisation's prefix). */
export async function createOpsJob(
  caller: Caller,
  body: {
    files: FileRef[];
    org_id: string;
    broadcast_preference: string;
    cargo_net_quantity?: string | null | undefined;
    officer_contact?: { name?: string | undefined; phone?: string | undefined } | null | undefined;
    service_type: string;
    client_time_utc?: string | undefined;
    client_timezone?: string | undefined;
  },
) {
  const org = await requireOrganisation(body.org_id, 'org_id');
  const files = await checkJobFiles(body.files, [OPS_SCOPE, org.id]);
  const job = await createJob({
    orgId: org.id,
    family: 'ops',
    files,
    createdBy: caller.id,
    ...clientTime(body),
    details: {
      broadcast_preference: body.broadcast_preference,
      cargo_net_quantity: body.cargo_net_quantity ?? null,
      officer_contact: body.officer_contact ?? null,
      service_type: body.service_type,
    },
  });
  return toJobView(job);
}

/** I4b: a merchant's own organisation, from the token. */
export async function createOrgJob(
  caller: Caller,
  body: {
    files: FileRef[];
    start_timezone: string;
    start_time: string;
    end_timezone: string;
    end_time: string;
    service_type: string;
    client_time_utc?: string | undefined;
    client_timezone?: string | undefined;
  },
) {
  const scope = uploadScope(caller, 'org');
  if (Date.parse(body.end_time) < Date.parse(body.start_time))
    throw invalidAt('end_time', 'must not be before start_time');
  const files = await checkJobFiles(body.files, [scope]);
  const job = await createJob({
    orgId: scope,
    family: 'org',
    files,
    createdBy: caller.id,
    ...clientTime(body),
    details: {
      start_timezone: body.start_timezone,
      start_time: toUtcIso(body.start_time),
      end_timezone: body.end_timezone,
      end_time: toUtcIso(body.end_time),
      service_type: body.service_type,
    },
  });
  return toJobView(job);
}

interface Multipart {
  files: { name: string; bytes: Buffer }[];
  fields: Record<string, string>;
}

function parseMultipart(body: Buffer, contentType: string | undefined): Promise<Multipart> {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) throw unsupportedMediaType('multipart/form-data');
  if (body.length > MAX_MULTIPART_BYTES) throw uploadTooLarge();
  return new Promise((resolve, reject) => {
    const result: Multipart = { files: [], fields: {} };
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        limits: { files: 2, fields: 20, fileSize: MAX_MULTIPART_BYTES },
      });
    } catch {
      reject(invalidAt('header.content-type', 'must carry a multipart boundary'));
      return;
    }
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (field === 'files') result.files.push({ name: info.filename ?? 'upload.csv', bytes: Buffer.concat(chunks) });
      });
    });
    parser.on('field', (name, value) => {
      result.fields[name] = value;
    });
    parser.on('filesLimit', () => reject(invalidAt('files', 'a job takes at most a tasks file and an items file')));
    parser.on('error', () => reject(invalidAt('body', 'is not valid multipart/form-data')));
    parser.on('close', () => resolve(result));
    parser.end(body);
  });
}

/** I3: the files go to object storage under the caller's prefix, then the job is created from them. */
export async function createJobFromUpload(
  caller: Caller,
  family: 'ops' | 'org',
  body: Buffer,
  contentType: string | undefined,
) {
  const form = await parseMultipart(body, contentType);
  if (form.files.length === 0)
    throw invalidAt('files', 'is required: send the tasks file (and the items file) as files');
  let orgId: string;
  if (family === 'ops') {
    const named = form.fields['org_id'];
    if (!named || !/^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(named)) {
      throw invalidAt('org_id', 'is required: the organisation the tasks are for');
    }
    orgId = (await requireOrganisation(named, 'org_id')).id;
  } else {
    orgId = uploadScope(caller, 'org');
  }
  const scope = family === 'ops' ? OPS_SCOPE : orgId;
  const files: FileData[] = [];
  for (const file of form.files) files.push(await storeUpload(scope, file.name, file.bytes));
  const job = await createJob({
    orgId,
    family,
    files,
    createdBy: caller.id,
    clientTimeUtc:
      form.fields['client_time_utc'] && !Number.isNaN(Date.parse(form.fields['client_time_utc']))
        ? toUtcIso(form.fields['client_time_utc'])
        : null,
    clientTimezone: form.fields['client_timezone'] ?? null,
    details: form.fields['service_type'] ? { service_type: form.fields['service_type'] } : {},
  });
  return toJobView(job);
}

/** I12: an import worker's result; a job has one (a second is 409). */
export async function submitResult(
  caller: Caller,
  jobId: string,
  body: Omit<ImportResult, 'id' | 'task_import_job_id' | 'server_time' | 'org_id' | 'warnings'> & {
    warnings?: string[] | undefined;
    id?: string | undefined;
    task_import_job_id?: string | undefined;
    org_id?: string | null | undefined;
  },
) {
  const job = await visibleJob(caller, jobId);
  if (body.task_import_job_id !== undefined && body.task_import_job_id !== job.id) {
    throw invalidAt('task_import_job_id', 'must be the job of the path');
  }
  for (const kind of ['tasks', 'items'] as const) {
    const counted = body[`total_${kind}_counted`];
    if (counted !== body[`total_${kind}_imported`] + body[`total_${kind}_rejected`]) {
      throw invalidAt(`total_${kind}_counted`, `must equal total_${kind}_imported + total_${kind}_rejected`);
    }
  }
  const result: ImportResult = {
    id: body.id ?? newObjectId(),
    task_import_job_id: job.id,
    file_import_results: body.file_import_results,
    total_tasks_counted: body.total_tasks_counted,
    total_tasks_imported: body.total_tasks_imported,
    total_tasks_rejected: body.total_tasks_rejected,
    total_items_counted: body.total_items_counted,
    total_items_imported: body.total_items_imported,
    total_items_rejected: body.total_items_rejected,
    errors: body.errors,
    warnings: body.warnings ?? [],
    server_time: clock.nowIso(),
    org_id: job.org_id,
  };
  // As stored: within the bounds of contract 4.9, with errors_total and errors_truncated.
  return toResultView(await saveResult(job, result));
}
