// The work-queue worker (SQS): hands each message to the worker of its kind — webhook deliveries, import runs,
// planning jobs.
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { withCapacity } from '#shared/db/capacity';
import { runImport } from '#shared/imports/runner';
import { logger } from '#shared/log';
import { runPlanningJob } from '#shared/planning/job';
import type { QueuedMessage } from '#shared/ports/queue';
import { deliverWebhook } from '#shared/webhooks/deliveries';

const workers: Record<QueuedMessage['kind'], (message: QueuedMessage) => Promise<void>> = {
  webhook: deliverWebhook,
  import: runImport,
  planning: async (message) => {
    await runPlanningJob(message);
  },
};

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    let message: QueuedMessage;
    try {
      message = JSON.parse(record.body) as QueuedMessage;
      if (!workers[message.kind]) throw new Error(`no worker for kind ${String(message.kind)}`);
    } catch (error) {
      // Poison: it will never succeed. It is handed back until the redrive policy moves it to the dead-letter queue.
      logger.error('poison message: not a work message; it will reach the dead-letter queue', {
        message_id: record.messageId,
        receive_count: record.attributes.ApproximateReceiveCount,
        error: error as Error,
      });
      batchItemFailures.push({ itemIdentifier: record.messageId });
      continue;
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
  return { batchItemFailures };
};
