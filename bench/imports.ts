/**
 * 100 000 tasks with 300 000 items: parse + validate alone, then the whole import (upload to the local S3, the
 * worker's two streaming passes, batched writes to the local DynamoDB), each in a fresh process: rows/s and peak memory.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '#lib/paths';
import { startBenchHost } from './host.ts';

const TASKS = 100_000;
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
  return JSON.parse(last) as { rows: number; ms: number; peakRssMb: number; peakHeapMb: number };
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
  const job = await createJob({ orgId: org.id, family: 'org', files, createdBy: 'bench', details: {} });
  await moveStatus(job, 'new', 'queued');
  const rows = TASKS * (1 + ITEMS_PER_TASK);
  const full = await child(['run', job.id, String(rows)], {
    LOG_LEVEL: 'SILENT',
    DISPATCH_LOCAL: '1',
    WORK_QUEUE_URL: '',
  });
  console.log(
    `whole import (2 passes, ${rows} rows written): ${(full.ms / 1000).toFixed(1)} s = ${Math.round(rows / (full.ms / 1000))} rows/s; peak RSS ${full.peakRssMb.toFixed(0)} MB, heap ${full.peakHeapMb.toFixed(0)} MB`,
  );
}
