/** Functions that no route calls: the queue workers (webhook deliveries now; imports and planning jobs later). */
import { Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { S3EventSourceV2, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { DispatchFunction } from '#lib/constructs/dispatch-function';
import type { DataStack } from '#lib/stacks/data-stack';
import type { RealtimeStack } from '#lib/stacks/realtime-stack';
import { connectionsTable, locationsTable, mainTable } from '#shared/db/tables';

export interface WorkersStackProps extends StackProps {
  data: DataStack;
  realtime: RealtimeStack;
}

export class WorkersStack extends Stack {
  readonly webhookWorker: DispatchFunction;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const { data } = props;
    this.webhookWorker = new DispatchFunction(this, 'WebhookWorker', {
      handlerPath: 'workers/queue',
      description: 'Work-queue worker: partner webhook deliveries and import runs',
      // An import of 100 000 rows streams two passes over its files; it renews its lease as it goes.
      timeout: Duration.minutes(15),
      memorySize: 1024,
      environment: {
        WORK_QUEUE_URL: data.workQueue.queueUrl,
        SECRET_BOX_KMS_KEY_ID: data.secretBoxKey.keyArn,
        UPLOAD_BUCKET: data.uploadBucket.bucketName,
      },
    }).bindTable(data.mainTable, mainTable, 'RW');
    this.webhookWorker.role!.addManagedPolicy(data.readUploads);
    // Planning jobs read driver locations and announce offers on the planning's channel.
    this.webhookWorker
      .bindTable(data.locationsTable, locationsTable, 'RO')
      .bindTable(data.connectionsTable, connectionsTable, 'RW');
    this.webhookWorker.addEnvironment('WEBSOCKET_MANAGEMENT_ENDPOINT', props.realtime.stage.callbackUrl);
    this.webhookWorker.role!.addManagedPolicy(props.realtime.manageConnections);
    this.webhookWorker.role!.addManagedPolicy(data.writeUploads);

    // The S3 trigger: records each upload's size and MD5.
    const uploadTrigger = new DispatchFunction(this, 'UploadTrigger', {
      handlerPath: 'workers/uploads',
      description: 'Records the size and MD5 of every object created under uploads/',
      timeout: Duration.minutes(2),
      environment: { UPLOAD_BUCKET: data.uploadBucket.bucketName },
    }).bindTable(data.mainTable, mainTable, 'RW');
    uploadTrigger.role!.addManagedPolicy(data.readUploads);
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
      environment: {
        WORK_QUEUE_URL: data.workQueue.queueUrl,
        WEBSOCKET_MANAGEMENT_ENDPOINT: props.realtime.stage.callbackUrl,
      },
    })
      .bindTable(data.mainTable, mainTable, 'RW')
      .bindTable(data.connectionsTable, connectionsTable, 'RW');
    data.workQueue.grantSendMessages(sweep);
    sweep.role!.addManagedPolicy(props.realtime.manageConnections);
    new Rule(this, 'EveryMinute', {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweep)],
    });

    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'The bucket-notification handler that aws-cdk-lib adds uses the AWS-maintained minimum for its own logs.',
    });
    // The only function that may open a sealed webhook secret.
    data.secretBoxKey.grantDecrypt(this.webhookWorker);
    data.workQueue.grantSendMessages(this.webhookWorker);
    this.webhookWorker.addEventSource(
      new SqsEventSource(data.workQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
  }
}
