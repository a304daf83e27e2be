/**
 * The import worker's writing pass (shared/imports/runner.ts), watched at the DynamoDB client: how many BatchWriteItem
 * calls it keeps in flight (more than the four of its old writer, never more than its bound), how often it extends
 * its lease (once per 5 000 items, not once per row while a count sits on a multiple of 5 000), and that a failed
 * write ends the run only once none of its writes is still on its way — and the retry then writes everything once.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useLocalServices } from '../support/local.ts';

// Thousands of writes on a shared, loaded machine: a call (or a file's stream, idle while the writes it waits for
// take their time) may outlast a request's default few seconds, and this file is not about timeouts. Read when the
// clients are made, below.
process.env['DEPENDENCY_REQUEST_TIMEOUT_MS'] = '30000';
await useLocalServices();
const { withMiddleware } = await import('../support/middleware.ts');
type Middleware = import('../support/middleware.ts').Middleware;
const { db, mainTableName } = await import('../../shared/db/client.ts');
const { putObject, uploadBucket } = await import('../../shared/ports/object-storage.ts');
const { createJob, findJob, moveStatus } = await import('../../shared/imports/jobs.ts');
const { runImport } = await import('../../shared/imports/runner.ts');
const { jobTaskRanges, taskId, taskKey } = await import('../../shared/imports/tasks.ts');

const TASKS_HEADER =
  'task_ref,from_street_address,from_city,from_country,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone\n';
const taskRow = (i: number) =>
  `T${i},${i} Orchard Rd,Singapore,SG,${i} Jurong West St,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T06:00:00Z,Asia/Singapore\n`;

/** A queued job of `tasks` tasks with one item each (quantity 2), files in the local S3. */
async function queuedJob(tasks: number) {
  const orgId = randomUUID();
  const files = [];
  for (const [name, body] of [
    ['tasks.csv', TASKS_HEADER + Array.from({ length: tasks }, (_, i) => taskRow(i)).join('')],
    [
      'items.csv',
      `task_ref,description,quantity\n${Array.from({ length: tasks }, (_, i) => `T${i},Parcel,2\n`).join('')}`,
    ],
  ] as const) {
    const key = `uploads/${orgId}/${randomUUID()}/${name}`;
    await putObject({ Bucket: uploadBucket(), Key: key, Body: body });
    files.push({
      file_name: name,
      file_size: Buffer.byteLength(body),
      storage_upload_bucket: uploadBucket(),
      storage_upload_key: key,
      url: '',
      checksum: null,
      checksum_method: 'MD5',
    });
  }
  const job = await createJob({ orgId, family: 'org', files, createdBy: 'test', details: {} });
  await moveStatus(job, 'new', 'queued');
  return job;
}

/** The job's entries in X10's index (GSI1, narrowed to the job), and the item count of its first and last task. */
async function written(job: { id: string; org_id: string | null; created_at: string }, tasks: number) {
  const jobId = job.id;
  const range = jobTaskRanges(job.org_id!, job)[0];
  let entries = 0;
  let cursor: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: mainTableName(),
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :job)',
        ExpressionAttributeValues: { ':pk': range.partition, ':job': range.prefix },
        Select: 'COUNT',
        ExclusiveStartKey: cursor,
      }),
    );
    entries += out.Count ?? 0;
    cursor = out.LastEvaluatedKey;
  } while (cursor);
  const itemCounts = [];
  for (const ref of ['T0', `T${tasks - 1}`]) {
    const task = await db().send(
      new GetCommand({ TableName: mainTableName(), Key: taskKey(taskId(jobId, ref)), ConsistentRead: true }),
    );
    itemCounts.push(task.Item?.['total_item_count']);
  }
  return { entries, itemCounts };
}

/** Watches BatchWriteItem calls (in flight now, most at once) and the job's lease extensions. */
function watch(jobId: string, failCall?: number) {
  const seen = { inFlight: 0, most: 0, calls: 0, leaseExtensions: 0, inFlightWhenThrown: -1 };
  const middleware: Middleware = (next, context) => async (args) => {
    const input = args.input as { Key?: { PK?: string }; UpdateExpression?: string };
    if (
      context.commandName === 'UpdateItemCommand' &&
      input.Key?.PK === `IMPORTJOB#${jobId}` &&
      input.UpdateExpression === 'SET lease_until = :lease, GSI3SK = :leaseKey'
    ) {
      seen.leaseExtensions++;
    }
    if (context.commandName !== 'BatchWriteItemCommand') return next(args);
    const call = ++seen.calls;
    seen.inFlight++;
    seen.most = Math.max(seen.most, seen.inFlight);
    try {
      if (call === failCall) {
        // Answers after the calls started beside it, as a connection that breaks does.
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw Object.assign(new Error('the write failed'), { name: 'ValidationException' });
      }
      return await next(args);
    } finally {
      seen.inFlight--;
    }
  };
  return { seen, middleware };
}

describe('the import writing pass', () => {
  it('keeps more than four and at most eight BatchWriteItem calls in flight, and extends its lease once per 5 000 items', async () => {
    const job = await queuedJob(2600);
    const { seen, middleware } = watch(job.id);
    await withMiddleware('import-writes', middleware, () => runImport({ kind: 'import', job_id: job.id }));
    expect((await findJob(job.id))?.current_status).toBe('completed');
    // 5 200 puts: 208 calls of 25.
    expect(seen.calls).toBe(208);
    expect(seen.most).toBeGreaterThan(4);
    expect(seen.most).toBeLessThanOrEqual(8);
    // Validation: at row 5 000 of its 5 200; writing: at item 5 000 (not at each of the 25 rows after it).
    expect(seen.leaseExtensions).toBe(2);
    expect(await written(job, 2600)).toEqual({ entries: 2600, itemCounts: [2, 2] });
  }, 180_000);

  it('ends a run whose write failed only once no write of it is on its way; the retry writes every task once', async () => {
    const job = await queuedJob(1000);
    const { seen, middleware } = watch(job.id, 30);
    const failed = await withMiddleware('import-writes', middleware, () =>
      runImport({ kind: 'import', job_id: job.id }).then(
        () => undefined,
        (error: unknown) => {
          seen.inFlightWhenThrown = seen.inFlight;
          return error;
        },
      ),
    );
    expect((failed as Error | undefined)?.message).toBe('the write failed');
    expect(seen.inFlightWhenThrown).toBe(0);
    const after = await findJob(job.id, true);
    expect(after?.current_status).toBe('processing');
    // The queue hands the message back once the lease is released; here, the retry runs at once.
    await runImport({ kind: 'import', job_id: job.id });
    expect((await findJob(job.id))?.current_status).toBe('completed');
    expect(await written(job, 1000)).toEqual({ entries: 1000, itemCounts: [2, 2] });
  }, 180_000);
});
