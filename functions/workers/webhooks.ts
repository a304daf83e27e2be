// The webhook delivery worker: fed by the work queue (SQS), one attempt per message; a failed attempt queues the next.
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '#shared/log';
import { deliverWebhook } from '#shared/webhooks/deliveries';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      await deliverWebhook(JSON.parse(record.body));
    } catch (error) {
      // Only infrastructure failures land here (the attempt itself is recorded); SQS retries, then the DLQ keeps it.
      logger.error('webhook worker failed', { message_id: record.messageId, error: error as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
};
