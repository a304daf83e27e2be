/**
 * Task import jobs (I2, I4–I7, I9–I12): the record, its status machine, and its one result.
 *
 * Items: the job `IMPORTJOB#<id> / JOB` (listed newest first per organisation on GSI1 `ORG#<org>#IMPORTS`, and for
 * operations staff across all on GSI2 `IMPORTS`); the result `IMPORTJOB#<id> / RESULT` (written once, condition on
 * absence), whose full body (every error string) lives in object storage, since it can outgrow an item.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Caller, seesAllOrganisations } from '#shared/auth/caller';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { moveCurrent } from '#shared/db/moves';
import {
  decodePageToken,
  encodePageToken,
  type PageRequest,
  queryMergedPage,
  queryPage,
  type RangeQuery,
  rangeCondition,
  rangeMeta,
} from '#shared/db/paging';
import { listingPartition, listingPartitions } from '#shared/db/shards';
import { conflict, forbidden, invalidAt, notFound } from '#shared/errors';
import { newObjectId, recordObjectId } from '#shared/ids';
import { type BoundedResult, boundResult, type ImportResult } from '#shared/imports/result-bounds';
import { getObject, putObject, uploadBucket } from '#shared/ports/object-storage';
import { activeJobsPartition, requeueAt } from '#shared/workers/active-jobs';

export type ImportStatus = 'new' | 'queued' | 'processing' | 'completed' | 'failed';

/** The only moves there are (contract 4.5); I10 accepts exactly these. */
export const STATUS_EDGES: Record<ImportStatus, readonly ImportStatus[]> = {
  new: ['queued', 'failed'],
  queued: ['processing', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
};

export interface FileData {
  file_name: string;
  file_size: number | null;
  storage_upload_bucket: string;
  storage_upload_key: string;
  url: string;
  checksum: string | null;
  checksum_method: string;
}

export interface ImportJob {
  id: string;
  org_id: string | null;
  family: 'ops' | 'org';
  upload_record: {
    id: string;
    files: FileData[];
    client_time_utc: string | null;
    client_timezone: string | null;
    server_time: string;
  };
  current_status: ImportStatus;
  status_record_id: string;
  status_updated_at: string;
  statuses: { status: ImportStatus; set_at_utc: string }[];
  last_executed_at_client_time_utc: string | null;
  last_executed_at_client_timezone: string | null;
  last_executed_at_server_time: string | null;
  server_time: string;
  created_at: string;
  created_by: string;
  dry_run: boolean;
  details: Record<string, unknown>;
  error?: string | null;
  lease_until?: number;
  /** The work message whose run holds the lease. */
  lease_owner?: string;
  /** false from the run's end until the partners' event is queued (shared/imports/runner.ts). */
  announced?: boolean;
  attempts?: number;
}

export const jobKey = (id: string) => ({ PK: `IMPORTJOB#${id}`, SK: 'JOB' });

const resultKey = (id: string) => ({ PK: `IMPORTJOB#${id}`, SK: 'RESULT' });

export function toJobView(job: ImportJob) {
  return {
    id: job.id,
    upload_record: job.upload_record,
    current_status: job.current_status,
    status_updated_at: job.status_updated_at,
    last_executed_at_client_time_utc: job.last_executed_at_client_time_utc,
    last_executed_at_client_timezone: job.last_executed_at_client_timezone,
    last_executed_at_server_time: job.last_executed_at_server_time,
    server_time: clock.nowIso(),
    created_at: job.created_at,
    org_id: job.org_id,
    dry_run: job.dry_run,
    ...job.details,
    ...(job.error ? { error: job.error } : {}),
  };
}

export async function createJob(input: {
  orgId: string | null;
  family: ImportJob['family'];
  files: FileData[];
  createdBy: string;
  clientTimeUtc?: string | null | undefined;
  clientTimezone?: string | null | undefined;
  details: Record<string, unknown>;
}): Promise<ImportJob> {
  const now = clock.nowIso();
  const job: ImportJob = {
    id: recordObjectId(),
    org_id: input.orgId,
    family: input.family,
    upload_record: {
      id: recordObjectId(),
      files: input.files,
      client_time_utc: input.clientTimeUtc ?? null,
      client_timezone: input.clientTimezone ?? null,
      server_time: now,
    },
    current_status: 'new',
    status_record_id: recordObjectId(),
    status_updated_at: now,
    statuses: [{ status: 'new', set_at_utc: now }],
    last_executed_at_client_time_utc: null,
    last_executed_at_client_timezone: null,
    last_executed_at_server_time: null,
    server_time: now,
    created_at: now,
    created_by: input.createdBy,
    dry_run: false,
    details: input.details,
  };
  const sort = `${now}#${job.id}`;
  await db().send(
    new PutCommand({
      TableName: mainTableName(),
      Item: {
        ...jobKey(job.id),
        ...(job.org_id ? { GSI1PK: `ORG#${job.org_id}#IMPORTS`, GSI1SK: sort } : {}),
        GSI2PK: listingPartition('IMPORTS', job.id),
        GSI2SK: sort,
        entity: 'import_job',
        ...job,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  return job;
}

export async function findJob(id: string, consistent = false): Promise<ImportJob | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: jobKey(id), ...(consistent ? { ConsistentRead: true } : {}) }),
  );
  return out.Item as ImportJob | undefined;
}

/** A job the caller may see: SysAdmin and internal workers any; everybody else their organisation's. */
export async function visibleJob(caller: Caller, id: string): Promise<ImportJob> {
  const job = await findJob(id);
  if (!job) throw notFound('import job');
  if (seesAllOrganisations(caller)) return job;
  if (caller.orgId && job.org_id === caller.orgId) return job;
  throw notFound('import job');
}

/**
 * Moves the job from `from` to `to` (`from: 'current'`: from whatever status the job is in) if that is an edge of the
 * machine, on the condition that the job is still in that status. When a worker moved the job between the read and
 * the write, the move is judged again against the job as it is now (shared/db/moves.ts): a move from `current` that
 * is still legal is written; otherwise 409, naming the status the job is in. `extra` sets more attributes in the same
 * write.
 */
export async function moveStatus(
  job: ImportJob,
  from: ImportStatus | 'current',
  to: ImportStatus,
  extra: Record<string, unknown> = {},
): Promise<ImportJob> {
  return moveCurrent(
    job,
    async (current, reread) => {
      const source = from === 'current' ? current.current_status : from;
      if (reread && current.current_status !== source)
        throw conflict(`the import job is ${current.current_status} now, not ${source}`);
      if (!STATUS_EDGES[source].includes(to))
        throw conflict(
          from === 'current'
            ? `the import job is ${source}: it cannot move to ${to}`
            : `an import job cannot move from ${source} to ${to}`,
        );
      return writeMove(current, source, to, extra);
    },
    {
      reread: () => findJob(job.id, true),
      gone: () => notFound('import job'),
      contended: () => conflict('the import job kept changing; retry'),
    },
  );
}

async function writeMove(
  { id, org_id: orgId }: ImportJob,
  from: ImportStatus,
  to: ImportStatus,
  extra: Record<string, unknown>,
): Promise<ImportJob> {
  const now = clock.nowIso();
  const names: Record<string, string> = { '#status': 'current_status' };
  const values: Record<string, unknown> = {
    ':from': from,
    ':to': to,
    ':now': now,
    ':entry': [{ status: to, set_at_utc: now }],
    ':statusId': newObjectId(),
  };
  const sets = [
    '#status = :to',
    'status_updated_at = :now',
    'statuses = list_append(statuses, :entry)',
    'status_record_id = :statusId',
  ];
  // A queued job is watched by the requeue sweep (shared/workers/requeue.ts) until it ends, in its organisation's list
  // (every way of making a job names one: a job without would be watched by no sweep, so its move is refused).
  if (to === 'queued' && !orgId) throw new Error(`import job ${id} names no organisation: no sweep would watch it`);
  const watch =
    to === 'queued' && orgId ? { GSI3PK: activeJobsPartition(orgId), GSI3SK: requeueAt(clock.nowMs()) } : {};
  Object.entries({ ...watch, ...extra }).forEach(([key, value], i) => {
    names[`#x${i}`] = key;
    values[`:x${i}`] = value;
    sets.push(`#x${i} = :x${i}`);
  });
  const ended = to === 'completed' || to === 'failed';
  const out = await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: jobKey(id),
      UpdateExpression: `SET ${sets.join(', ')}${ended ? ' REMOVE GSI3PK, GSI3SK' : ''}`,
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return out.Attributes as ImportJob;
}

/** I9: the status record. */
export function toStatusRecord(job: ImportJob) {
  return {
    id: job.status_record_id,
    import_status: job.current_status,
    file_upload_record_id: job.upload_record.id,
    task_import_job_id: job.id,
    error: job.current_status === 'failed' ? (job.error ?? null) : null,
    status_updated_at: job.status_updated_at,
    statuses: job.statuses,
  };
}

/** I10: `prev_status` must be the current status and the move an edge of the machine. */
export async function changeStatus(caller: Caller, id: string, prev: ImportStatus, next: ImportStatus) {
  const job = await visibleJob(caller, id);
  if (job.current_status !== prev) throw conflict(`prev_status is ${prev}, but the job is ${job.current_status}`);
  return toStatusRecord(await moveStatus(job, prev, next));
}

/** I11: from new, queued or processing. */
export async function failJob(caller: Caller, id: string, reason = 'failed on request') {
  const job = await visibleJob(caller, id);
  return toStatusRecord(await moveStatus(job, 'current', 'failed', { error: reason }));
}

/** I2: a page of jobs, newest first; family 1 may filter by organisations. */
export async function listJobs(
  caller: Caller,
  family: ImportJob['family'],
  filters: RangeQuery & { orgIds?: string[] | undefined },
  page: PageRequest,
) {
  let index: 'GSI1' | 'GSI2' = 'GSI2';
  let partitions = ['IMPORTS'];
  if (family === 'org') {
    if (!caller.orgId) throw forbidden('your account belongs to no organisation');
    index = 'GSI1';
    partitions = [`ORG#${caller.orgId}#IMPORTS`];
  } else if (filters.orgIds && filters.orgIds.length > 0) {
    index = 'GSI1';
    partitions = filters.orgIds.map((org) => `ORG#${org}#IMPORTS`);
  }
  const view = (item: Record<string, unknown>) => toJobView(item as unknown as ImportJob);
  if (partitions.length === 1) {
    const input = { TableName: mainTableName(), IndexName: index, ...rangeCondition(index, partitions[0]!, filters) };
    const found =
      partitions[0] === 'IMPORTS'
        ? await queryMergedPage(listingPartitions('IMPORTS'), input, page, view)
        : await queryPage(input, page, view);
    return { meta: { ...rangeMeta(filters), ...found.meta }, task_import_jobs: found.items };
  }
  // Several organisations: the first `page × per_page` of each, merged (bounded by the page asked for). A
  // page_token here names the next page's number: the merge has no single key to start from.
  const pageNumber = page.pageToken ? mergedPageOf(page.pageToken) : page.page;
  const enough = { page: 1, perPage: Math.min(1000, pageNumber * page.perPage) };
  const pages = await Promise.all(
    partitions.map((partition) =>
      queryPage(
        { TableName: mainTableName(), IndexName: index, ...rangeCondition(index, partition, filters) },
        enough,
        view,
      ),
    ),
  );
  const merged = pages
    .flatMap((p) => p.items)
    .sort((a, b) =>
      filters.order === 'asc' ? a.created_at.localeCompare(b.created_at) : b.created_at.localeCompare(a.created_at),
    );
  const start = (pageNumber - 1) * page.perPage;
  // More follows when the merge holds more, or an organisation had more than was read of it.
  const more = merged.length > start + page.perPage || pages.some((found) => found.meta.next_page_token !== null);
  return {
    meta: {
      ...rangeMeta(filters),
      page: pageNumber,
      per_page: page.perPage,
      next_page_token: more ? encodePageToken({ merged: 'organisations' }, pageNumber + 1) : null,
    },
    task_import_jobs: merged.slice(start, start + page.perPage),
  };
}

/** The page number a merged listing's page_token carries. */
function mergedPageOf(token: string): number {
  const { key, page } = decodePageToken(token);
  if (key['merged'] !== 'organisations') throw invalidAt('query.page_token', 'is not a token this service issued');
  return page;
}

export type { ImportResult } from '#shared/imports/result-bounds';

/**
 * Writes the job's one result (409 if it has one), within the bounds of contract 4.9: the body to object storage, the
 * claim to the table. Answers the result as stored.
 */
/** What an import's end tells partners of its result (`import.completed`, `import.failed`): its six totals. */
const resultCounts = (result: ImportResult) => ({
  total_tasks_counted: result.total_tasks_counted,
  total_tasks_imported: result.total_tasks_imported,
  total_tasks_rejected: result.total_tasks_rejected,
  total_items_counted: result.total_items_counted,
  total_items_imported: result.total_items_imported,
  total_items_rejected: result.total_items_rejected,
  errors_total: result.errors_total ?? result.errors.length,
});

/** The counts stored with a job's result (one item read), or undefined before it has one. */
export async function storedResultCounts(jobId: string): Promise<ReturnType<typeof resultCounts> | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: resultKey(jobId), ProjectionExpression: 'counts' }),
  );
  return out.Item?.['counts'] as ReturnType<typeof resultCounts> | undefined;
}

export async function saveResult(job: ImportJob, full: ImportResult): Promise<BoundedResult> {
  const result = boundResult(full);
  const key = `results/${job.org_id ?? 'ops'}/${job.id}/result-${result.id}.json`;
  await putObject({
    Bucket: uploadBucket(),
    Key: key,
    Body: JSON.stringify(result),
    ContentType: 'application/json',
  });
  try {
    await db().send(
      new PutCommand({
        TableName: mainTableName(),
        Item: {
          ...resultKey(job.id),
          entity: 'import_result',
          id: result.id,
          result_key: key,
          // The result's counts, small enough for the item: the job's end event carries them without reading S3.
          counts: resultCounts(result),
          created_at: clock.nowIso(),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (error) {
    if (isConditionalFailure(error)) throw conflict('the import job already has a result');
    throw error;
  }
  return result;
}

/** I7: 404 until a result exists. */
export async function readResult(caller: Caller, id: string): Promise<ImportResult> {
  const job = await visibleJob(caller, id);
  const out = await db().send(new GetCommand({ TableName: mainTableName(), Key: resultKey(job.id) }));
  if (!out.Item) throw notFound('import result');
  const object = await getObject({ Bucket: uploadBucket(), Key: String(out.Item['result_key']) });
  const stored = JSON.parse(await object.Body!.transformToString('utf8')) as ImportResult;
  // Bounded again: a result stored before the bounds (or larger for any reason) is answered within them all the same;
  // one stored before warnings existed reads with none.
  return toResultView(boundResult(stored));
}

/**
 * A result as the API shows it (I7, I12): the spec's Import result member by member, how many errors there were, and a
 * dry run's `dry_run`.
 */
export function toResultView(result: BoundedResult): BoundedResult {
  return {
    id: result.id,
    task_import_job_id: result.task_import_job_id,
    file_import_results: result.file_import_results,
    total_tasks_counted: result.total_tasks_counted,
    total_tasks_imported: result.total_tasks_imported,
    total_tasks_rejected: result.total_tasks_rejected,
    total_items_counted: result.total_items_counted,
    total_items_imported: result.total_items_imported,
    total_items_rejected: result.total_items_rejected,
    errors: result.errors,
    errors_total: result.errors_total,
    errors_truncated: result.errors_truncated,
    warnings: result.warnings,
    server_time: clock.nowIso(),
    org_id: result.org_id,
    ...(result.dry_run !== undefined ? { dry_run: result.dry_run } : {}),
  };
}
