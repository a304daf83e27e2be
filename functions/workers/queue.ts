// The work-queue worker (SQS): hands each message to the worker of its kind — webhook deliveries, import runs,
// planning jobs.
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { withCapacity } from '#shared/db/capacity';
import { runImport } from '#shared/imports/runner';
import { logger } from '#shared/log';
import { runPlanningJob } from '#shared/planning/job';
import type { QueuedMessage } from '#shared/ports/queue';
import { deliverWebhook } from '#shared/webhooks/deliveries';

/** The kinds this worker runs: route builds have a queue and a function of their own (functions/workers/routes.ts). */
type Kind = Exclude<QueuedMessage['kind'], 'route_build'>;

const workers: Record<Kind, (message: QueuedMessage) => Promise<void>> = {
  webhook: deliverWebhook,
  import: runImport,
  planning: async (message) => {
    await runPlanningJob(message);
  },
};

/**
 * The least time one more message of a kind needs, before any of that kind has run in this invocation: a webhook
 * attempt waits at most 10 s for the partner; an import of the largest files takes minutes (87 s for 10 000 tasks
 * in the bench); a planning job reads and writes one organisation's runsheets.
 */
export const LEAST_TIME_MS: Record<Kind, number> = {
  webhook: 15_000,
  import: 180_000,
  planning: 60_000,
};
/** Kept free at the end of an invocation: the log lines, the batch response, Lambda's own bookkeeping. */
export const SPARE_MS = 5_000;

const kindOf = (body: string): Kind | undefined => {
  try {
    const kind = (JSON.parse(body) as Partial<QueuedMessage>).kind;
    return kind && kind in LEAST_TIME_MS ? (kind as Kind) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * One batch of up to ten messages, one after another. Before each, the time left is checked: when it cannot hold
 * one more message (the longest any message took in this invocation, at least that kind's LEAST_TIME_MS), the
 * worker stops and reports that message and every later one as batch item failures, so SQS hands them out again
 * instead of the whole batch being retried after a timeout.
 */
export const handler = async (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  let longestMs = 0;
  for (const [index, record] of event.Records.entries()) {
    const kind = kindOf(record.body);
    const needed = Math.max(longestMs, kind ? LEAST_TIME_MS[kind] : 0) + SPARE_MS;
    const left = context.getRemainingTimeInMillis();
    if (left < needed) {
      const rest = event.Records.slice(index);
      logger.warn('not enough time left for another message; the rest of the batch is handed back', {
        left_ms: left,
        needed_ms: needed,
        handed_back: rest.length,
      });
      batchItemFailures.push(...rest.map((r) => ({ itemIdentifier: r.messageId })));
      break;
    }
    const started = performance.now();
    await handleRecord(record, batchItemFailures);
    longestMs = Math.max(longestMs, performance.now() - started);
  }
  return { batchItemFailures } satisfies SQSBatchResponse;
};

async function handleRecord(
  record: SQSEvent['Records'][number],
  batchItemFailures: SQSBatchResponse['batchItemFailures'],
): Promise<void> {
  let message: QueuedMessage & { kind: Kind };
  try {
    message = JSON.parse(record.body) as QueuedMessage & { kind: Kind };
    if (!workers[message.kind]) throw new Error(`no worker for kind ${String(message.kind)}`);
  } catch (error) {
    // Poison: it will never succeed. It is handed back until the redrive policy moves it to the dead-letter queue.
    logger.error('poison message: not a work message; it will reach the dead-letter queue', {
      message_id: record.messageId,
      receive_count: record.attributes.ApproximateReceiveCount,
      error: error as Error,
    });
    batchItemFailures.push({ itemIdentifier: record.messageId });
    return;
  }
  try {
    // Each message's DynamoDB capacity is its own tally, on its log line (the local queue reports the same).
    const { tally } = await withCapacity(() => workers[message.kind](message), `queue:${message.kind}`);
    logger.info('queue message done', { kind: message.kind, message_id: record.messageId, capacity: tally });
  } catch (error) {
    // SQS hands the message back after the visibility timeout; after five receives the dead-letter queue keeps it.
    logger.error('queue worker failed; SQS will hand the message back', {
      message_id: record.messageId,
      receive_count: record.attributes.ApproximateReceiveCount,
      error: error as Error,
    });
    batchItemFailures.push({ itemIdentifier: record.messageId });
  }
}
