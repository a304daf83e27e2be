/**
 * Runs in a fresh process so that its memory is the import's alone: either parse + validate two local files
 * (`validate <tasks> <items>`), or run the import worker on a queued job (`run <job id>`) against the emulators named
 * by the environment. Prints one JSON line: rows, milliseconds, peak RSS and heap.
 */
import { createReadStream } from 'node:fs';

let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
};
const timer = setInterval(sample, 20);

const [mode, ...args] = process.argv.slice(2);
const started = performance.now();
let rows = 0;
let validationMs: number | undefined;
let ms = 0;
if (mode === 'validate') {
  const { validateFiles } = await import('#shared/imports/runner');
  const result = await validateFiles(
    async () => createReadStream(args[0]!),
    async () => createReadStream(args[1]!),
  );
  rows = result.tasks.counted + result.items.counted;
  ms = performance.now() - started;
} else {
  const { runImport } = await import('#shared/imports/runner');
  const { findJob } = await import('#shared/imports/jobs');
  await runImport({ kind: 'import', job_id: args[0]! });
  const job = await findJob(args[0]!);
  if (job?.current_status !== 'completed') throw new Error(`the job ended ${job?.current_status}: ${job?.error}`);
  rows = Number(args[1]);
  ms = performance.now() - started;
  // The validation pass's time: from the tasks file's start to the last file's end, as the job's result records them.
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, mainTableName } = await import('#shared/db/client');
  const { getObject, uploadBucket } = await import('#shared/ports/object-storage');
  const claim = await db().send(
    new GetCommand({ TableName: mainTableName(), Key: { PK: `IMPORTJOB#${args[0]}`, SK: 'RESULT' } }),
  );
  const object = await getObject({ Bucket: uploadBucket(), Key: String(claim.Item!['result_key']) });
  const files = (
    JSON.parse(await object.Body!.transformToString('utf8')) as {
      file_import_results: { start_time: string; end_time: string }[];
    }
  ).file_import_results;
  validationMs = Date.parse(files.at(-1)!.end_time) - Date.parse(files[0]!.start_time);
}
sample();
clearInterval(timer);
console.log(
  JSON.stringify({
    rows,
    ms,
    validationMs,
    peakRssMb: peakRss / 2 ** 20,
    peakHeapMb: peakHeap / 2 ** 20,
  }),
);
