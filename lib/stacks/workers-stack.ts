/** Functions that no route calls: the work-queue worker, the S3 upload trigger and the offer-expiry schedule. */
import { Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { S3EventSourceV2, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { DispatchFunction } from '#lib/constructs/dispatch-function';
import { applyNeeds } from '#lib/constructs/grants';
import type { DataStack } from '#lib/stacks/data-stack';
import type { RealtimeStack } from '#lib/stacks/realtime-stack';
import { background } from '#shared/functions';

export interface WorkersStackProps extends StackProps {
  data: DataStack;
  realtime: RealtimeStack;
  mailFrom: string;
}

export class WorkersStack extends Stack {
  readonly webhookWorker: DispatchFunction;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const { data } = props;
    const needs = { data, realtime: props.realtime, mailFrom: props.mailFrom };
    this.webhookWorker = new DispatchFunction(this, 'WebhookWorker', {
      handlerPath: 'workers/queue',
      description: 'Work-queue worker: partner webhook deliveries, import runs and planning jobs',
      // An import of 100 000 rows streams two passes over its files; it renews its lease as it goes.
      timeout: Duration.minutes(15),
      memorySize: 1024,
    });
    applyNeeds(this.webhookWorker, background('workers/queue'), needs);

    // The S3 trigger: records each upload's size and MD5.
    const uploadTrigger = new DispatchFunction(this, 'UploadTrigger', {
      handlerPath: 'workers/uploads',
      description: 'Records the size and MD5 of every object created under uploads/',
      timeout: Duration.minutes(2),
    });
    applyNeeds(uploadTrigger, background('workers/uploads'), needs);
    uploadTrigger.addEventSource(
      new S3EventSourceV2(Bucket.fromBucketArn(this, 'Uploads', data.uploadBucket.bucketArn), {
        events: [EventType.OBJECT_CREATED],
        filters: [{ prefix: 'uploads/' }],
      }),
    );
    const sweep = new DispatchFunction(this, 'ExpireOffers', {
      handlerPath: 'workers/expire-offers',
      description: 'Closes broadcast pairs that were not answered before their expiry',
      timeout: Duration.minutes(1),
    });
    applyNeeds(sweep, background('workers/expire-offers'), needs);
    new Rule(this, 'EveryMinute', {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweep)],
    });

    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'The bucket-notification handler that aws-cdk-lib adds uses the AWS-maintained minimum for its own logs.',
    });
    // The event source mapping polls the queue with the worker's role (receive, delete, change visibility).
    this.webhookWorker.addEventSource(
      new SqsEventSource(data.workQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
  }
}
