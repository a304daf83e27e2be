// The route-build worker (SQS, one message at a time): runs a build (contract 4.10) in a function of its own, so
// that a solve of minutes never holds up imports, planning jobs or webhook deliveries.
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { withCapacity } from '#shared/db/capacity';
import { logger } from '#shared/log';
import type { QueuedMessage } from '#shared/ports/queue';
import { runRouteBuild } from '#shared/routing/worker';

export const handler = async (event: SQSEvent) => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as QueuedMessage;
      if (message.kind !== 'route_build') throw new Error(`not a route build: ${String(message.kind)}`);
      const { tally } = await withCapacity(() => runRouteBuild(message), 'queue:route_build');
      logger.info('route build message done', { message_id: record.messageId, capacity: tally });
    } catch (error) {
      // SQS hands the message back after the visibility timeout; after five receives the dead-letter queue keeps it.
      logger.error('route build failed; SQS will hand the message back', {
        message_id: record.messageId,
        receive_count: record.attributes.ApproximateReceiveCount,
        error: error as Error,
      });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures } satisfies SQSBatchResponse;
};
