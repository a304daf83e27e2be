/**
 * The solve, in a thread of its own (solve-runner.ts starts it): the search holds the CPU for up to `time_limit_s`,
 * and the process around it must keep answering (the local host's other requests; the worker's progress writes).
 * Handed the problem (its travel matrix as a source, built here first: travel.ts) and the options' numbers; posts
 * `{progress}` at most every `progressEveryMs` and then `{solution}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { solve } from '#shared/routing/solver/index';
import { matrixOf, type ProblemToSolve } from '#shared/routing/travel';

const {
  problem: handed,
  seed,
  timeLimitMs,
  progressEveryMs,
} = workerData as {
  problem: ProblemToSolve;
  seed: number;
  timeLimitMs: number;
  progressEveryMs: number;
};
const { travel, ...rest } = handed;
const problem = { ...rest, matrix: matrixOf(travel) };
// The search's time starts once the matrix is built: `time_limit_s` is the search's own (contract 4.10).
const started = Date.now();
const solution = solve(problem, {
  seed,
  now: () => Date.now(),
  deadlineMs: started + timeLimitMs,
  progressEveryMs,
  onProgress: (progress) => parentPort?.postMessage({ progress }),
});
parentPort?.postMessage({ solution });
