/**
 * The solve, in a thread of its own (solve-runner.ts starts it): the search holds the CPU for up to `time_limit_s`,
 * and the process around it must keep answering (the local host's other requests; the worker's progress writes).
 * Handed the problem and the options' numbers; posts `{progress}` at most every `progressEveryMs` and then
 * `{solution}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { solve } from '#shared/routing/solver/index';
import type { RoutingProblem } from '#shared/routing/solver/model';

const { problem, seed, timeLimitMs, progressEveryMs } = workerData as {
  problem: RoutingProblem;
  seed: number;
  timeLimitMs: number;
  progressEveryMs: number;
};
const started = Date.now();
const solution = solve(problem, {
  seed,
  now: () => Date.now(),
  deadlineMs: started + timeLimitMs,
  progressEveryMs,
  onProgress: (progress) => parentPort?.postMessage({ progress }),
});
parentPort?.postMessage({ solution });
