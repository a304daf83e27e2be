/**
 * The requeue sweep: a queued or running import or planning job (or route build) is listed in GSI3 `ACTIVEJOBS#<org>`
 * (its organisation's list; the sweep reads every organisation's) until it ends, keyed by when to look at it again (a
 * while after it was queued; when its lease runs out). A job still listed past that time has lost its work message: the
 * enqueue after the commit failed, or the message reached the dead-letter queue while a dependency was down. The sweep
 * gives it a new message (the worker's claim makes a duplicate harmless) and moves its key on, so that nothing stays
 * `queued` or `processing` for ever; a job that keeps failing for its own reasons is failed by its worker after three
 * attempts.
 *
 * A route build is not handed a second message while its first may still be waiting its turn (issue 51 item 2): a
 * build waits `queued` behind other builds for as long as the route worker is busy (at most two at once, served
 * fairly by organisation), and nothing in the table tells a message waiting from one lost. The route queue does: when
 * it holds messages not yet handed to a worker (visible or delayed; SQS's approximate counts, locally the exact
 * ones), the build's may be one of them, so the sweep only moves its key on and looks again later; once the queue holds
 * none, a build still due has lost its message and gets a new one. A lost message is then re-sent once the queue has
 * drained, which is when it would have run anyway.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clock } from '#shared/clock';
import { db, isConditionalFailure, mainTableName } from '#shared/db/client';
import { dueEntriesByOrg } from '#shared/db/shards';
import { logger } from '#shared/log';
import { type QueuedMessage, queue, routeQueue } from '#shared/ports/queue';
import { routeBuildMessage } from '#shared/routing/builds';
import { buildIdOf, buildPlanningOf } from '#shared/routing/keys';
import { ACTIVE_JOBS, activeJobsPartition, requeueAt } from '#shared/workers/active-jobs';

/** One sweep of every organisation's list (`orgs`: the sweep's run's, read when not given). */
export async function requeueStaleJobs(orgs?: readonly string[]): Promise<number> {
  const out = await dueEntriesByOrg(ACTIVE_JOBS, clock.nowIso(), 100, orgs);
  let requeued = 0;
  // Read once a sweep, and only if a route build is due: whether the route queue still holds messages waiting.
  let routeQueueBusy: Promise<boolean> | undefined;
  for (const item of out.items) {
    const job = item['entity'] === 'planning' ? (item['job'] as { id?: string } | null) : undefined;
    const message: QueuedMessage | undefined =
      item['entity'] === 'import_job'
        ? { kind: 'import' as const, job_id: String(item['id']) }
        : item['entity'] === 'route_build'
          ? // The sweep's index projects the keys, not the build's members: its planning, id and organisation are its keys'.
            routeBuildMessage({
              planning_id: buildPlanningOf(item['PK']),
              id: buildIdOf(item['SK']),
              org_id: String(item['GSI3PK']).slice(activeJobsPartition('').length),
            })
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
    if (message.kind === 'route_build') {
      routeQueueBusy ??= routeQueue()
        .waiting()
        .then((waiting) => waiting > 0);
      // Its message may be waiting its turn: the key moved on above, it is looked at again later.
      if (await routeQueueBusy) continue;
    }
    // A route build has a queue (and worker) of its own (contract 4.10).
    await (message.kind === 'route_build' ? routeQueue() : queue()).enqueue(message, 0);
    logger.warn('requeued a job whose work message was lost', { ...message, was_due: item['GSI3SK'] });
    requeued++;
  }
  return requeued;
}
