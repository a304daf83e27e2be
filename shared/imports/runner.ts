/**
 * Running an import job (I6 and the import worker). I6 moves the job to `queued` and puts a message on the work
 * queue; the worker claims the job with a conditional write (a lease, so a duplicate message, a repeated trigger or
 * a retried worker never runs it twice at once), then:
 *   1. classifies the files by their header row (exactly one tasks file, at most one items file, each ≤ 50 MiB);
 *   2. validates every row of both files, streaming — nothing is written yet, so a file-level problem (not CSV, a
 *      missing column, too many rows) fails the job with nothing half-imported;
 *   3. unless it is a dry run, streams the files again and writes the accepted tasks and items in batches, under
 *      keys made from the job and the row (`TASK#<id of job and task_ref>`, shared/imports/tasks.ts), so a rerun writes the same items again, never
 *      a second copy;
 *   4. writes the one result and completes the job, and tells the organisation's partners.
 * A run that dies is retried (the lease expires); after three attempts the job is failed, never left processing.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isDependencyFailure } from '#shared/aws/faults';
import { clock } from '#shared/clock';
import { putAll } from '#shared/db/batch';
import { db, mainTableName } from '#shared/db/client';
import { isDomainError } from '#shared/errors';
import { newObjectId } from '#shared/ids';
import { kindOfText, MAX_FILE_BYTES, readRows } from '#shared/imports/csv';
import { type FileKind, type ItemRow, parseItem, parseTask, rowError, type TaskRow } from '#shared/imports/csv-rows';
import { decodeStart, FileProblem } from '#shared/imports/csv-text';
import {
  type FileData,
  findJob,
  type ImportJob,
  type ImportResult,
  jobKey,
  moveStatus,
  saveResult,
  storedResultCounts,
} from '#shared/imports/jobs';
import { ErrorTally } from '#shared/imports/result-bounds';
import { taskId, taskIndexKeys, taskItemKey, taskKey } from '#shared/imports/tasks';
import { logger } from '#shared/log';
import { getObject, headObject } from '#shared/ports/object-storage';
import { type QueuedMessage, registerLocalWorker } from '#shared/ports/queue';
import { publishPartnerEvent } from '#shared/webhooks/deliveries';
import { failRun, finishJob } from '#shared/workers/endings';
import { claimLease, extendLease as extendLeaseOf, type LeasedRecord, MAX_ATTEMPTS } from '#shared/workers/lease';

export const LEASE_MS = 15 * 60 * 1000;
/** The writing pass extends the lease every this many items. */
const LEASE_EVERY = 5000;

/** The job's lease (shared/workers/lease.ts): `queued` → `processing`, on the job's own record. */
const leased = (jobId: string): LeasedRecord => ({
  name: 'import',
  key: jobKey(jobId),
  status: 'current_status',
  queued: 'queued',
  running: 'processing',
});

/**
 * Takes the job for this worker: from `queued`, or from a `processing` whose lease has run out or is held by an
 * earlier receive of this same message (which failed without releasing it). The move from `queued` is recorded as
 * moveStatus records a move (shared/imports/jobs.ts).
 */
function claim(job: ImportJob, owner: string): Promise<ImportJob | undefined> {
  const now = clock.nowIso();
  return claimLease<ImportJob>(leased(job.id), job.current_status, owner, LEASE_MS, {
    entering: {
      set: { status_updated_at: now, status_record_id: newObjectId() },
      append: { statuses: [{ status: 'processing', set_at_utc: now }] },
    },
  });
}

const extendLease = (jobId: string) => extendLeaseOf(leased(jobId), LEASE_MS);

interface SourceFile {
  file: FileData;
  kind: FileKind;
  eTag: string | undefined;
}

/** Opens a file as a stream of exactly the version that was classified. */
async function open(source: SourceFile): Promise<Readable> {
  const object = await getObject({
    Bucket: source.file.storage_upload_bucket,
    Key: source.file.storage_upload_key,
    ...(source.eTag ? { IfMatch: source.eTag } : {}),
  });
  return object.Body as Readable;
}

const HEAD_BYTES = 65_536;

/**
 * The first 64 KiB of a file. Never asked of an empty file (the HEAD said 0 bytes): S3 answers a range of nothing with
 * 416, and a local S3 with a 206 that has no body; a 416 all the same (the file shrank since) reads as empty.
 */
async function firstBytes(file: FileData): Promise<Buffer> {
  try {
    const head = await getObject({
      Bucket: file.storage_upload_bucket,
      Key: file.storage_upload_key,
      Range: `bytes=0-${HEAD_BYTES - 1}`,
    });
    return Buffer.from(await head.Body!.transformToByteArray());
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'InvalidRange' || e.$metadata?.httpStatusCode === 416) return Buffer.alloc(0);
    throw error;
  }
}

/** Exported for its test (an empty object, S3's 416). */
export async function classify(files: FileData[]): Promise<{ tasks: SourceFile; items?: SourceFile }> {
  if (files.length === 0) throw new FileProblem('the job has no files');
  const sources: SourceFile[] = [];
  for (const file of files) {
    let size: number;
    let eTag: string | undefined;
    try {
      const head = await headObject({ Bucket: file.storage_upload_bucket, Key: file.storage_upload_key });
      size = head.ContentLength ?? 0;
      eTag = head.ETag;
    } catch (error) {
      // S3 throttling or not answering is no verdict on the file: the run is retried.
      if (isDependencyFailure(error)) throw error;
      throw new FileProblem(`${file.file_name}: the file is not in object storage`);
    }
    if (size > MAX_FILE_BYTES) throw new FileProblem(`${file.file_name}: the file is larger than 50 MiB`);
    const start = size === 0 ? Buffer.alloc(0) : await firstBytes(file);
    let kind: FileKind;
    try {
      kind = kindOfText(decodeStart(start, start.length >= size));
    } catch (error) {
      if (error instanceof FileProblem) throw new FileProblem(`${file.file_name}: ${error.message}`);
      throw error;
    }
    sources.push({ file, kind, eTag });
  }
  const tasks = sources.filter((s) => s.kind === 'tasks');
  const items = sources.filter((s) => s.kind === 'items');
  if (tasks.length !== 1) throw new FileProblem(`a job needs exactly one tasks file; it has ${tasks.length}`);
  if (items.length > 1) throw new FileProblem(`a job has at most one items file; it has ${items.length}`);
  return { tasks: tasks[0]!, ...(items[0] ? { items: items[0] } : {}) };
}

/** What validation found; everything the writing pass needs is small (refs and sums, not rows). */
interface Validation {
  /** `errors` counts every rejected row and keeps the first of them (the result shows no more). */
  tasks: { counted: number; errors: ErrorTally; start: string; end: string };
  items: { counted: number; errors: ErrorTally; start: string; end: string };
  /**
   * Each accepted task_ref and the row that stands for it: the writing pass takes a tasks row exactly when it is
   * valid and this row (so it needs no map of its own to find repeated refs again).
   */
  accepted: Map<string, number>;
  /** The items' quantity summed by task_ref. */
  quantities: Map<string, number>;
  /** `<file name>: <warning>` each: columns ignored, a header without rows. */
  warnings: string[];
}

/**
 * The rows of the tasks file that stand: valid, and the first row of their task_ref. A rejected row's one error names
 * every problem of it, its repeat of an earlier ref included.
 */
async function* acceptedTasks(
  stream: Readable,
  onError: (error: string) => void,
  onWarning?: (warning: string) => void,
  fileName = 'tasks file',
) {
  // Each ref's first row, as a spreadsheet numbers it (a repeat names it).
  const seen = new Map<string, number>();
  for await (const row of readRows(stream, 'tasks', parseTask, onWarning)) {
    const first = row.ref === '' ? undefined : seen.get(row.ref);
    if (row.ref !== '' && first === undefined) seen.set(row.ref, row.line);
    const problems = [...(row.problems ?? []), ...(first !== undefined ? [`task_ref: repeats row ${first}`] : [])];
    if (problems.length > 0) onError(`${fileName} ${rowError(row.line, row.ref, problems)}`);
    else yield row as { n: number; ref: string; value: TaskRow };
  }
}

async function* acceptedItems(
  stream: Readable,
  accepted: ReadonlyMap<string, unknown>,
  onError: (error: string) => void,
  onWarning?: (warning: string) => void,
  fileName = 'items file',
) {
  for await (const row of readRows(stream, 'items', parseItem, onWarning)) {
    const orphan = row.ref !== '' && !accepted.has(row.ref);
    const problems = [...(row.problems ?? []), ...(orphan ? ['task_ref: names no accepted task'] : [])];
    if (problems.length > 0) onError(`${fileName} ${rowError(row.line, row.ref, problems)}`);
    else yield row as { n: number; ref: string; value: ItemRow };
  }
}

/** Pass 1: every row checked, nothing written. Exported for the benchmark (parse + validate alone). */
export async function validateFiles(
  tasks: () => Promise<Readable>,
  items?: () => Promise<Readable>,
  onProgress?: (rows: number) => Promise<void>,
  names: { tasks: string; items: string } = { tasks: 'tasks file', items: 'items file' },
): Promise<Validation> {
  const result: Validation = {
    tasks: { counted: 0, errors: new ErrorTally(), start: clock.nowIso(), end: '' },
    items: { counted: 0, errors: new ErrorTally(), start: '', end: '' },
    accepted: new Map(),
    quantities: new Map(),
    warnings: [],
  };
  const warn = (name: string) => (warning: string) => result.warnings.push(`${name}: ${warning}`);
  let rows = 0;
  // Awaited only every 5 000 rows: an await per row is a microtask hop per row, which a 400 000-row file feels.
  const progressDue = () => ++rows % 5000 === 0 && onProgress !== undefined;
  for await (const row of acceptedTasks(
    await tasks(),
    (error) => result.tasks.errors.add(error),
    warn(names.tasks),
    names.tasks,
  )) {
    result.accepted.set(row.ref, row.n);
    if (progressDue()) await onProgress!(rows);
  }
  result.tasks.counted = result.accepted.size + result.tasks.errors.total;
  result.tasks.end = clock.nowIso();
  result.items.start = clock.nowIso();
  if (items) {
    let imported = 0;
    for await (const row of acceptedItems(
      await items(),
      result.accepted,
      (error) => result.items.errors.add(error),
      warn(names.items),
      names.items,
    )) {
      imported++;
      result.quantities.set(row.ref, (result.quantities.get(row.ref) ?? 0) + row.value.quantity);
      if (progressDue()) await onProgress!(rows);
    }
    result.items.counted = imported + result.items.errors.total;
  }
  result.items.end = clock.nowIso();
  return result;
}

/** BatchWriteItem calls the writing pass keeps in flight. */
const CALLS_IN_FLIGHT = 8;

/**
 * The writing pass's puts, 25 a BatchWriteItem: each batch is one shared/db/batch.ts `putAll` (which resends what
 * DynamoDB leaves unprocessed, backing off), up to CALLS_IN_FLIGHT at once. The rows wait only when that many are on
 * their way, and then for the first to finish, never for a whole group: the file's stream is never left idle for
 * long (S3 drops a body stream idle past the client's socket timeout). On a failure no new batch starts, and it is
 * thrown only once every batch on its way has settled: the run never fails (and releases its lease) while a write of
 * its own is still on its way.
 */
class BatchWriter {
  private pending: Record<string, unknown>[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;
  /** Items handed to putAll so far. */
  written = 0;

  /** Takes one item; answers a promise to await only when the caller must wait (a batch full, the calls at their bound). */
  put(item: Record<string, unknown>): Promise<void> | undefined {
    this.pending.push(item);
    return this.pending.length >= 25 ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.failure) return this.fail();
    if (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const write: Promise<void> = putAll(mainTableName(), batch)
        .catch((error: unknown) => {
          this.failure ??= { error };
        })
        .finally(() => this.inFlight.delete(write));
      this.inFlight.add(write);
      this.written += batch.length;
    }
    while (this.inFlight.size >= CALLS_IN_FLIGHT && !this.failure) await Promise.race(this.inFlight);
    if (this.failure) return this.fail();
  }

  async close(): Promise<void> {
    await this.flush();
    await Promise.all(this.inFlight);
    if (this.failure) return this.fail();
  }

  private async fail(): Promise<never> {
    await Promise.all(this.inFlight);
    throw this.failure!.error;
  }
}

const stableId = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);

/** Pass 2: the accepted rows, written under keys that make a rerun rewrite, not duplicate. */
async function writeAccepted(job: ImportJob, files: { tasks: SourceFile; items?: SourceFile }, validation: Validation) {
  const writer = new BatchWriter();
  const now = clock.nowIso();
  let leaseAt = LEASE_EVERY;
  const extendDue = () => {
    if (writer.written < leaseAt) return false;
    leaseAt = writer.written + LEASE_EVERY;
    return true;
  };
  // Validation's verdict, not a second map of refs: a tasks row stands when it is valid and the row its ref names.
  for await (const row of readRows(await open(files.tasks), 'tasks', parseTask)) {
    if (row.problems !== undefined || validation.accepted.get(row.ref) !== row.n) continue;
    const value = row.value!;
    const id = taskId(job.id, row.ref);
    const wait = writer.put({
      ...taskKey(id),
      // X10 lists an organisation's tasks (a job always has one; the guard keeps a null out of the index keys).
      ...(job.org_id ? taskIndexKeys(job.org_id, job, row.n) : {}),
      entity: 'task',
      id,
      import_job_id: job.id,
      org_id: job.org_id,
      ...value,
      total_item_count: validation.quantities.get(row.ref) ?? 0,
      client_time_utc: job.upload_record.client_time_utc,
      client_timezone: job.upload_record.client_timezone,
      created_at: now,
    });
    if (wait) await wait;
    if (extendDue()) await extendLease(job.id);
  }
  if (files.items) {
    // An items file lists a task's items together, as a rule: its id is worked out once for the run of them.
    let lastRef: string | undefined;
    let lastId = '';
    for await (const row of acceptedItems(await open(files.items), validation.accepted, () => {})) {
      if (row.ref !== lastRef) {
        lastRef = row.ref;
        lastId = taskId(job.id, row.ref);
      }
      const wait = writer.put({
        ...taskItemKey(lastId, row.n),
        entity: 'task_item',
        id: stableId(job.id, 'item', String(row.n)),
        import_job_id: job.id,
        org_id: job.org_id,
        ...row.value,
        created_at: now,
      });
      if (wait) await wait;
      if (extendDue()) await extendLease(job.id);
    }
  }
  await writer.close();
}

function fileResults(files: { tasks: SourceFile; items?: SourceFile }, validation: Validation, status: string) {
  const entry = (source: SourceFile, counts: Validation['tasks']) => ({
    ...source.file,
    file_was_processed: true,
    error: '',
    import_status: status,
    total_counted: counts.counted,
    total_rejected: counts.errors.total,
    start_time: counts.start,
    end_time: counts.end,
  });
  return [entry(files.tasks, validation.tasks), ...(files.items ? [entry(files.items, validation.items)] : [])];
}

function emptyResult(job: ImportJob): ImportResult {
  return {
    id: newObjectId(),
    task_import_job_id: job.id,
    file_import_results: [],
    total_tasks_counted: 0,
    total_tasks_imported: 0,
    total_tasks_rejected: 0,
    total_items_counted: 0,
    total_items_imported: 0,
    total_items_rejected: 0,
    errors: [],
    warnings: [],
    server_time: clock.nowIso(),
    org_id: job.org_id,
    dry_run: job.dry_run,
  };
}

async function saveOnce(job: ImportJob, result: ImportResult): Promise<void> {
  try {
    await saveResult(job, result);
  } catch (error) {
    // A previous attempt saved it just before dying: that result stands.
    if (!isDomainError(error, 'conflict')) throw error;
  }
}

/**
 * The job ends, then the partners are told. `announced: false` is written with the end and set true once the event
 * is queued: if queueing fails, the run fails (the queue hands the message back) and the retry finds the job ended
 * but unannounced, and announces it (with the same webhook-id).
 */
function finish(job: ImportJob, status: 'completed' | 'failed', error?: string) {
  return finishJob(
    () => moveStatus(job, 'processing', status, { ...(error ? { error } : {}), announced: false }),
    announce,
  );
}

async function announce(job: ImportJob): Promise<void> {
  const status = job.current_status as 'completed' | 'failed';
  if (job.org_id) {
    // The result's totals as stored with it (a retried announcement sends the same): what a partner acts on first.
    const counts = await storedResultCounts(job.id);
    await publishPartnerEvent(
      job.org_id,
      status === 'completed' ? 'import.completed' : 'import.failed',
      { import_job_id: job.id, status, ...(job.error ? { error: job.error } : {}), ...(counts ?? {}) },
      `${job.id}:${status}`,
    );
  }
  await db().send(
    new UpdateCommand({
      TableName: mainTableName(),
      Key: jobKey(job.id),
      UpdateExpression: 'SET announced = :true',
      ExpressionAttributeValues: { ':true': true },
    }),
  );
}

/** The import worker: one run of one job. */
export async function runImport(message: QueuedMessage): Promise<void> {
  const found = await findJob(String(message['job_id']));
  if (found && ['completed', 'failed'].includes(found.current_status) && found.announced === false) {
    await announce(found);
    return;
  }
  if (!found || (found.current_status !== 'queued' && found.current_status !== 'processing')) return;
  const owner = message.message_id ?? randomUUID();
  const job = await claim(found, owner);
  if (!job) return;
  try {
    const files = await classify(job.upload_record.files);
    const validation = await validateFiles(
      () => open(files.tasks),
      files.items ? () => open(files.items!) : undefined,
      () => extendLease(job.id),
      { tasks: files.tasks.file.file_name, items: files.items?.file.file_name ?? 'items file' },
    );
    if (!job.dry_run) await writeAccepted(job, files, validation);
    const { tasks, items } = validation;
    await saveOnce(job, {
      ...emptyResult(job),
      file_import_results: fileResults(files, validation, 'completed'),
      total_tasks_counted: tasks.counted,
      total_tasks_imported: tasks.counted - tasks.errors.total,
      total_tasks_rejected: tasks.errors.total,
      total_items_counted: items.counted,
      total_items_imported: items.counted - items.errors.total,
      total_items_rejected: items.errors.total,
      // saveResult keeps the first MAX_ERRORS of these: the tasks file's first, as they were found.
      errors: [...tasks.errors.kept, ...items.errors.kept],
      errors_total: tasks.errors.total + items.errors.total,
      warnings: validation.warnings,
    });
    await finish(job, 'completed');
  } catch (error) {
    if (error instanceof FileProblem) {
      await saveOnce(job, {
        ...emptyResult(job),
        file_import_results: job.upload_record.files.map((file) => ({
          ...file,
          file_was_processed: false,
          error: error.message,
          import_status: 'failed',
          total_counted: 0,
          total_rejected: 0,
          start_time: clock.nowIso(),
          end_time: clock.nowIso(),
        })),
        errors: [error.message],
      });
      await finish(job, 'failed', error.message);
      return;
    }
    // Failed for good on its last attempt; else the queue's retry takes the job over (a dependency's fault uncounted).
    await failRun({ record: leased(job.id), owner, attempts: job.attempts }, error, async () => {
      logger.error('import failed for good', { import_job_id: job.id, error: error as Error });
      await saveOnce(job, {
        ...emptyResult(job),
        errors: [`the import did not finish after ${MAX_ATTEMPTS} attempts`],
      });
      await finish(job, 'failed', `the import did not finish after ${MAX_ATTEMPTS} attempts`);
    });
  }
}

registerLocalWorker('import', runImport);
