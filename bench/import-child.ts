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
if (mode === 'validate') {
  const { validateFiles } = await import('#shared/imports/runner');
  const result = await validateFiles(
    async () => createReadStream(args[0]!),
    async () => createReadStream(args[1]!),
  );
  rows = result.tasks.counted + result.items.counted;
} else {
  const { runImport } = await import('#shared/imports/runner');
  const { findJob } = await import('#shared/imports/jobs');
  await runImport({ kind: 'import', job_id: args[0]! });
  const job = await findJob(args[0]!);
  if (job?.current_status !== 'completed') throw new Error(`the job ended ${job?.current_status}: ${job?.error}`);
  rows = Number(args[1]);
}
sample();
clearInterval(timer);
console.log(
  JSON.stringify({
    rows,
    ms: performance.now() - started,
    peakRssMb: peakRss / 2 ** 20,
    peakHeapMb: peakHeap / 2 ** 20,
  }),
);
