/**
 * How a run of a leased worker ends, one way for the three (issue 56 item 4): the import runner
 * (shared/imports/runner.ts), the planning job (shared/planning/job.ts) and the route build (shared/routing/worker.ts).
 *
 * - A job ends in two steps (`finishJob`): its end is written (the worker's own move: `moveStatus`, `moveJob`, the
 *   build's `end`, each moving the status with `announced: false` and taking the job out of the requeue sweep's
 *   list), then told (events, partner webhooks) and marked told. A run that dies between the two leaves the end
 *   written and untold: the next run of the same message finds it so and tells it.
 * - A run that fails (`failRun`) fails its job for good only for its own reasons on its last attempt (`afterFailure`,
 *   MAX_ATTEMPTS in shared/workers/lease.ts); otherwise it lets its lease lapse at once for the queue's retry (a
 *   dependency's fault handed back uncounted) and throws again, so the queue hands the message back.
 */
import { isDependencyFailure } from '#shared/aws/faults';
import { logger } from '#shared/log';
import { isLastAttempt, type LeasedRecord, releaseLease } from '#shared/workers/lease';

/** What a failed run makes of its job: failed for good, retried (the attempt counted), or handed back uncounted. */
export type AfterFailure = 'fail' | 'retry' | 'hand_back';

/**
 * The decision after a run failed with `error` on its attempt `attempts`: a dependency's fault is no attempt of the
 * job's own (`hand_back`, whatever the count); the job's own failure on its last attempt fails it (`fail`); any
 * other is the queue's to retry (`retry`). Pure.
 */
export function afterFailure(error: unknown, attempts: number | undefined): AfterFailure {
  if (isDependencyFailure(error)) return 'hand_back';
  return isLastAttempt(attempts) ? 'fail' : 'retry';
}

/** A job's end: written first (`end`, which answers the job as ended), then told (`announce`). Answers the job. */
export async function finishJob<T>(end: () => Promise<T>, announce: (ended: T) => Promise<unknown>): Promise<T> {
  const ended = await end();
  await announce(ended);
  return ended;
}

/** The run that failed: its job's lease and the attempt it is on. */
export interface FailedRun {
  record: LeasedRecord;
  owner: string;
  attempts: number | undefined;
}

/**
 * After a run failed with `error`: `failForGood` (which ends the job `failed` through `finishJob`) when
 * `afterFailure` says so, and the run is over; otherwise the lease is released (`release`: shared/workers/lease.ts's,
 * unless a test gives its own) and `error` thrown again for the queue's retry.
 */
export async function failRun(
  run: FailedRun,
  error: unknown,
  failForGood: () => Promise<unknown>,
  release: typeof releaseLease = releaseLease,
): Promise<void> {
  const next = afterFailure(error, run.attempts);
  if (next === 'fail') {
    await failForGood();
    return;
  }
  await release(run.record, run.owner, next === 'hand_back');
  logger.warn(`${run.record.name} run interrupted; the queue will retry it`, { error: error as Error });
  throw error;
}
