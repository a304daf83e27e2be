/**
 * 100 000 tasks with 300 000 items: parse + validate alone, then the whole import (upload to the local S3, the
 * worker's two streaming passes, batched writes to the local DynamoDB), each in a fresh process: rows/s and peak memory.
 * Beside the import's write rate, in the same run and on the same emulator: plain BatchWriteItem calls of as many
 * items as the import wrote (its tasks, its items and its tasks' index entries, counted in the table afterwards).
 * Alone: `npx tsx bench/imports.ts`.
 */
import './env.ts';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ROOT } from '#lib/paths';
import { startBenchHost, stopBenchHost } from './host.ts';
import { rawBatchWriteRate } from './raw-writes.ts';

/** `IMPORT_BENCH_TASKS` scales it down (a loaded machine); the figures the docs quote are at 100 000. */
const TASKS = Number(process.env['IMPORT_BENCH_TASKS'] ?? 100_000);
const ITEMS_PER_TASK = 3;

export async function benchImportFiles(dir: string) {
  const tasksPath = join(dir, 'tasks.csv');
  const itemsPath = join(dir, 'items.csv');
  const tasks = createWriteStream(tasksPath);
  const items = createWriteStream(itemsPath);
  tasks.write(
    'task_ref,from_street_address,from_city,from_country,from_zip_code,to_street_address,to_city,to_country,from_start_time_utc,from_end_time_utc,from_timezone,to_start_time_utc,to_end_time_utc,to_timezone,total_item_weight,total_weight_unit,notes\n',
  );
  items.write('task_ref,sku,description,quantity,weight,weight_unit\n');
  for (let i = 0; i < TASKS; i++) {
    const ref = `T${String(i).padStart(6, '0')}`;
    if (
      !tasks.write(
        `${ref},"${i} Orchard Rd, #0${i % 9}-1",Singapore,SG,23${String(i % 10000).padStart(4, '0')},${i} Jurong West St,Singapore,SG,2026-11-22T01:00:00Z,2026-11-22T03:00:00Z,Asia/Singapore,2026-11-22T04:00:00Z,2026-11-22T06:00:00Z,Asia/Singapore,${(i % 50) + 0.5},kg,"Leave with ""concierge"""\n`,
      )
    ) {
      await once(tasks, 'drain');
    }
    for (let j = 0; j < ITEMS_PER_TASK; j++) {
      if (!items.write(`${ref},SKU-${j},"Parcel ${j}, small",${j + 1},0.${j + 1},kg\n`)) await once(items, 'drain');
    }
  }
  tasks.end();
  items.end();
  await Promise.all([once(tasks, 'close'), once(items, 'close')]);
  return { tasksPath, itemsPath };
}

/** Asynchronous: the local S3 the child reads from runs in this process, whose event loop must keep turning. */
async function child(args: string[], env: NodeJS.ProcessEnv) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'import-child.ts'), ...args],
    {
      env: { ...process.env, ...env },
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const last = stdout.trim().split('\n').at(-1)!;
  return JSON.parse(last) as {
    rows: number;
    ms: number;
    validationMs?: number;
    peakRssMb: number;
    peakHeapMb: number;
  };
}

export async function benchImports() {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-bench-import-'));
  const { tasksPath, itemsPath } = await benchImportFiles(dir);
  const size = (statSync(tasksPath).size + statSync(itemsPath).size) / 2 ** 20;
  console.log(`\n## Task import: ${TASKS} tasks and ${TASKS * ITEMS_PER_TASK} items (${size.toFixed(1)} MiB of CSV)`);

  const validate = await child(['validate', tasksPath, itemsPath], { LOG_LEVEL: 'SILENT' });
  console.log(
    `parse + validate alone:  ${validate.rows} rows in ${(validate.ms / 1000).toFixed(2)} s = ${Math.round(validate.rows / (validate.ms / 1000))} rows/s (budget 100 000); peak RSS ${validate.peakRssMb.toFixed(0)} MB, heap ${validate.peakHeapMb.toFixed(0)} MB (budget 256 MB)`,
  );

  await startBenchHost('imports');
  const { putObject, uploadBucket } = await import('#shared/ports/object-storage');
  const { createJob, moveStatus } = await import('#shared/imports/jobs');
  const { createOrganisation } = await import('#shared/accounts/organisations');
  const org = await createOrganisation({ name: 'Bulk merchant', kind: 'merchant' });
  const files = [];
  for (const [name, path] of [
    ['tasks.csv', tasksPath],
    ['items.csv', itemsPath],
  ] as const) {
    const key = `uploads/${org.id}/bench/${name}`;
    await putObject({
      Bucket: uploadBucket(),
      Key: key,
      Body: createReadStream(path),
      ContentLength: statSync(path).size,
    });
    files.push({
      file_name: name,
      file_size: statSync(path).size,
      storage_upload_bucket: uploadBucket(),
      storage_upload_key: key,
      url: '',
      checksum: null,
      checksum_method: 'MD5',
    });
  }
  // The raw figure before the import, of items shaped as the import's will be (measured again after it).
  const rawBefore = await rawRates(await expectedWrites(tasksPath, itemsPath));
  const job = await createJob({ orgId: org.id, family: 'org', files, createdBy: 'bench', details: {} });
  await moveStatus(job, 'new', 'queued');
  const rows = TASKS * (1 + ITEMS_PER_TASK);
  const full = await child(['run', job.id, String(rows)], {
    LOG_LEVEL: 'SILENT',
    DISPATCH_LOCAL: '1',
    WORK_QUEUE_URL: '',
  });
  const seconds = full.ms / 1000;
  console.log(
    `whole import (2 passes, ${rows} rows): ${seconds.toFixed(1)} s = ${Math.round(rows / seconds)} rows/s (validation pass ${full.validationMs === undefined ? '?' : (full.validationMs / 1000).toFixed(1)} s); peak RSS ${full.peakRssMb.toFixed(0)} MB, heap ${full.peakHeapMb.toFixed(0)} MB (budget 256 MB)`,
  );
  const written = await countWrites(org.id, job.id);
  const total = written.tasks + written.items + written.indexEntries;
  console.log(
    `written: ${written.tasks} tasks + ${written.items} items (the job's result) + ${written.indexEntries} index entries of the tasks (counted in GSI1 and GSI2) = ${total}, ${Math.round(total / seconds)}/s over the whole import`,
  );
  // The same items, each kind as plain puts of copies of one of the import's own (index attributes dropped, so an
  // index entry is a small item of its own), one call of 25 at a time; run before and after the import, so that a
  // change in the machine's load during the run shows as two different figures.
  const after = await rawRates(written);
  const before = rawBefore;
  const mean = { all: (before.all + after.all) / 2, rows: (before.rows + after.rows) / 2 };
  console.log(
    `plain BatchWriteItem of the same ${total} items: ${Math.round(before.all)}/s before the import, ${Math.round(after.all)}/s after; ratio ${(total / seconds / mean.all).toFixed(2)} to their mean (${(total / seconds / before.all).toFixed(2)}–${(total / seconds / after.all).toFixed(2)}; goal ≥ 0.8). Rows alone: the import's ${Math.round(rows / seconds)} rows/s against ${Math.round(mean.rows)}/s for its ${written.tasks + written.items} tasks and items: ${(rows / seconds / mean.rows).toFixed(2)}`,
  );
}

type Written = Awaited<ReturnType<typeof countWrites>>;

/** The raw rate of the import's items: overall, and of its tasks and items alone. */
async function rawRates(written: Written) {
  const taskSeconds = written.tasks / (await rawBatchWriteRate(written.tasks, written.task));
  const itemSeconds = written.items / (await rawBatchWriteRate(written.items, written.item));
  const entrySeconds =
    written.indexEntries / (await rawBatchWriteRate(written.indexEntries, { entity: 'index_entry' }));
  return {
    all: (written.tasks + written.items + written.indexEntries) / (taskSeconds + itemSeconds + entrySeconds),
    rows: (written.tasks + written.items) / (taskSeconds + itemSeconds),
  };
}

/**
 * Before the import: the counts it will write (every row of the bench's files is valid; two index entries a task) and a
 * task and an item shaped as the worker writes them, from the files' first rows (raw-writes drops index attributes).
 */
async function expectedWrites(tasksPath: string, itemsPath: string): Promise<Written> {
  const { parse } = await import('csv-parse/sync');
  const { parseItem, parseTask } = await import('#shared/imports/csv-rows');
  const first = (path: string) => {
    const [header, row] = readFileSync(path, 'utf8').split('\n', 2) as [string, string];
    return (parse(`${header}\n${row}\n`, { columns: true }) as Record<string, string>[])[0]!;
  };
  const common = { import_job_id: 'x'.repeat(24), org_id: 'x'.repeat(24), created_at: new Date().toISOString() };
  return {
    tasks: TASKS,
    items: TASKS * ITEMS_PER_TASK,
    indexEntries: 2 * TASKS,
    task: {
      entity: 'task',
      id: 'x'.repeat(24),
      ...common,
      ...parseTask(first(tasksPath)),
      total_item_count: 6,
      client_time_utc: null,
      client_timezone: null,
    },
    item: { entity: 'task_item', id: 'x'.repeat(24), ...common, ...parseItem(first(itemsPath)) },
  };
}

/**
 * What the import wrote: its tasks and items as its result counts them, and its tasks' index entries counted in the
 * indexes (Queries of the organisation's partitions, narrowed to the job); and one task and one item as written.
 */
async function countWrites(orgId: string, jobId: string) {
  const { GetCommand, QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, mainTableName } = await import('#shared/db/client');
  const { jobTaskRanges, taskId, taskKey, taskItemKey } = await import('#shared/imports/tasks');
  const { jobKey } = await import('#shared/imports/jobs');
  const { getObject, uploadBucket } = await import('#shared/ports/object-storage');
  const get = async (key: Record<string, string>) =>
    (await db().send(new GetCommand({ TableName: mainTableName(), Key: key }))).Item!;
  const claim = await get({ PK: `IMPORTJOB#${jobId}`, SK: 'RESULT' });
  const object = await getObject({ Bucket: uploadBucket(), Key: String(claim['result_key']) });
  const result = JSON.parse(await object.Body!.transformToString('utf8')) as {
    total_tasks_imported: number;
    total_items_imported: number;
  };
  let indexEntries = 0;
  const job = await get(jobKey(jobId));
  for (const { index, partition, prefix } of jobTaskRanges(orgId, {
    id: jobId,
    created_at: String(job['created_at']),
  })) {
    let cursor: Record<string, unknown> | undefined;
    do {
      const out = await db().send(
        new QueryCommand({
          TableName: mainTableName(),
          IndexName: index,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :job)',
          ExpressionAttributeNames: { '#pk': `${index}PK`, '#sk': `${index}SK` },
          ExpressionAttributeValues: { ':pk': partition, ':job': prefix },
          Select: 'COUNT',
          ExclusiveStartKey: cursor,
        }),
      );
      indexEntries += out.Count ?? 0;
      cursor = out.LastEvaluatedKey;
    } while (cursor);
  }
  const first = taskId(jobId, 'T000000');
  return {
    tasks: result.total_tasks_imported,
    items: result.total_items_imported,
    indexEntries,
    task: await get(taskKey(first)),
    item: await get(taskItemKey(first, 1)),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchImports();
  await stopBenchHost();
}
