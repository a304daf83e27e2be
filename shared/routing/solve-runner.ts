/**
 * Runs the solver in a worker thread (solve-thread.ts), so that the event loop stays free while it builds the travel
 * matrix and searches: the
 * worker writes its progress on the build as it comes, and locally the host keeps answering every other request.
 * In the bundle the thread is its own file beside the handler (`solve-thread.mjs`, lib/constructs/dispatch-function.ts);
 * from source it is the TypeScript file, loaded through tsx's loader.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RoutingSolution } from '#shared/routing/solver/model';
import type { ProblemToSolve } from '#shared/routing/travel';

export interface SolveRun {
  seed: number;
  timeLimitMs: number;
  progressEveryMs: number;
  onProgress: (progress: { bestDistanceM: number; elapsedMs: number }) => void;
}

/** The threads solving now (a test stops one to play a worker that dies mid-solve). */
export const solvingThreads = new Set<Worker>();

/**
 * The thread's entry: the bundle's `solve-thread.mjs`, or from source a small module that registers tsx's loader in
 * the thread (a worker thread does not take `--import` from its `execArgv` on Node 20) and then loads the TypeScript.
 */
function threadEntry(): URL {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new URL('./solve-thread.mjs', here);
  // tsx's ESM API (the `require` condition resolves its .cjs twin, beside it).
  const api = pathToFileURL(
    createRequire(here)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const thread = new URL('./solve-thread.ts', here).href;
  const code = `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(thread)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

export function solveInThread(problem: ProblemToSolve, run: SolveRun): Promise<RoutingSolution> {
  const worker = new Worker(threadEntry(), {
    workerData: {
      problem,
      seed: run.seed,
      timeLimitMs: run.timeLimitMs,
      progressEveryMs: run.progressEveryMs,
    },
  });
  solvingThreads.add(worker);
  return new Promise<RoutingSolution>((resolve, reject) => {
    let solution: RoutingSolution | undefined;
    worker.on(
      'message',
      (message: { progress?: Parameters<SolveRun['onProgress']>[0]; solution?: RoutingSolution }) => {
        if (message.progress) run.onProgress(message.progress);
        if (message.solution) solution = message.solution;
      },
    );
    worker.on('error', (error) => {
      solvingThreads.delete(worker);
      reject(error);
    });
    worker.on('exit', (code) => {
      solvingThreads.delete(worker);
      if (solution) resolve(solution);
      else reject(new Error(`the solver's thread stopped (exit code ${code}) before it answered`));
    });
  });
}
