/**
 * The requeue sweep: a queued or running import or planning job (or route build) is listed in GSI3 `ACTIVEJOBS#<org>`
 * (its organisation's list; the sweep reads every organisation's) until it ends, keyed by when to look at it again (a
 * while after it was queued; when its lease runs out). A job still listed past that time has lost its work message: the
 * enqueue after the commit failed, or the message reached the dead-letter queue while a dependency was down. The sweep
 * gives it a new message (the worker's claim makes a duplicate harmless) and moves its key on, so that nothing stays
 * `queued` or `processing` for ever; a job that keeps failing for its own reasons is failed by its worker after three
 * attempts.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { dueEntriesByOrg } from '#shared/db/shards';
import { logger } from '#shared/log';
import { type QueuedMessage, queue, routeQueue } from '#shared/ports/queue';
import { buildIdOf, buildPlanningOf } from '#shared/routing/keys';
import { ACTIVE_JOBS, requeueAt } from '#shared/workers/active-jobs';

/** One sweep of every organisation's list (`orgs`: the sweep's run's, read when not given). */
export async function requeueStaleJobs(orgs?: readonly string[]): Promise<number> {
  const out = await dueEntriesByOrg(ACTIVE_JOBS, clock.nowIso(), 100, orgs);
  let requeued = 0;
  for (const item of out.items) {
    const job = item['entity'] === 'planning' ? (item['job'] as { id?: string } | null) : undefined;
    const message: QueuedMessage | undefined =
      item['entity'] === 'import_job'
        ? { kind: 'import' as const, job_id: String(item['id']) }
        : item['entity'] === 'route_build'
          ? // The sweep's index projects the keys, not the build's members: its planning and id are its key's.
            { kind: 'route_build' as const, planning_id: buildPlanningOf(item['PK']), build_id: buildIdOf(item['SK']) }
          : job?.id
            ? { kind: 'planning' as const, planning_id: String(item['id']), job_id: job.id }
            : undefined;
    if (!message) continue;
    try {
      // Moved on first, on condition that nothing else moved it: two sweeps never both requeue one job.
      await db().send(
        new UpdateCommand({
          TableName: mainTableName(),
          Key: { PK: item['PK'], SK: item['SK'] },
          UpdateExpression: 'SET GSI3SK = :later',
          ConditionExpression: 'GSI3SK = :seen',
          ExpressionAttributeValues: { ':later': requeueAt(clock.nowMs()), ':seen': item['GSI3SK'] },
        }),
      );
    } catch (error) {
      if (isConditionalFailure(error)) continue;
      throw error;
    }
    // A route build has a queue (and worker) of its own (contract 4.10).
    await (message.kind === 'route_build' ? routeQueue() : queue()).enqueue(message, 0);
    logger.warn('requeued a job whose work message was lost', { ...message, was_due: item['GSI3SK'] });
    requeued++;
  }
  return requeued;
}
