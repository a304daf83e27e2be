/** Functions that no route calls: the queue workers (webhook deliveries now; imports and planning jobs later). */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Construct } from 'constructs';
import { DispatchFunction } from '#lib/constructs/dispatch-function';
import type { DataStack } from '#lib/stacks/data-stack';
import { mainTable } from '#shared/db/tables';

export interface WorkersStackProps extends StackProps {
  data: DataStack;
}

export class WorkersStack extends Stack {
  readonly webhookWorker: DispatchFunction;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const { data } = props;
    this.webhookWorker = new DispatchFunction(this, 'WebhookWorker', {
      handlerPath: 'workers/queue',
      description: 'Work-queue worker: partner webhook deliveries and import runs',
      timeout: Duration.seconds(30),
      environment: {
        WORK_QUEUE_URL: data.workQueue.queueUrl,
        SECRET_BOX_KMS_KEY_ID: data.secretBoxKey.keyArn,
      },
    }).bindTable(data.mainTable, mainTable, 'RW');
    // The only function that may open a sealed webhook secret.
    data.secretBoxKey.grantDecrypt(this.webhookWorker);
    data.workQueue.grantSendMessages(this.webhookWorker);
    this.webhookWorker.addEventSource(
      new SqsEventSource(data.workQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
  }
}
