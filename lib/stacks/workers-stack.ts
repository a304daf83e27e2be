/**
 * Functions that no route calls: the work-queue worker, the S3 upload trigger, the offer-expiry schedule and the
 * signing-key rotation (Secrets Manager's schedule).
 */
import { Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { CfnPermission } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { S3EventSourceV2, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import { CfnRotationSchedule } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BUNDLING, DispatchFunction } from '#lib/constructs/dispatch-function';
import { applyNeeds } from '#lib/constructs/grants';
import { type DataStack, ROUTE_WORKER_TIMEOUT, WORKER_TIMEOUT } from '#lib/stacks/data-stack';
import type { RealtimeStack } from '#lib/stacks/realtime-stack';
import { stageOf } from '#lib/stage';
import { ROTATION_INTERVAL_DAYS } from '#shared/auth/key-rotation';
import { background } from '#shared/functions';

export interface WorkersStackProps extends StackProps {
  data: DataStack;
  realtime: RealtimeStack;
  mailFrom: string;
}

/**
 * The concurrent executions a new account may start with (Lambda's quota is often 10 there, not 1 000, until a
 * quota increase is granted: docs/deploy.md says which to request). Every function of the stage shares it.
 */
export const NEW_ACCOUNT_CONCURRENCY = 10;

/**
 * How many queue workers may run at once: 2, the least an SQS event source takes. Imports and planning jobs share
 * the tables with the API, and a worker runs up to 15 minutes: at 10 (the old bound) a burst of jobs held a new
 * account's whole quota and the authorizer, on every request's path, was throttled. 2 leaves 8 of those 10.
 */
export const WORKER_MAX_CONCURRENCY = 2;

/**
 * How many route builds solve at once, in the whole stage: 2. Fairness does not come from this figure but from the
 * route queue (an SQS fair queue, each build's message grouped by its organisation, docs/routing.md) and the bound of
 * 2 builds under way an organisation (shared/routing/build-slots.ts): when a place frees, SQS hands it to the
 * organisation with the fewest builds in flight, so another organisation's build waits at most until the first of
 * the running builds ends (one build: `time_limit_s` + 30 s at most), at 2 places as at 20. 2 is the least an SQS
 * event source takes and keeps, with the work queue's 2, 6 of a new account's 10 concurrent executions for the
 * authorizer and the API; a larger account may raise it to shorten the waits (docs/scale.md).
 */
export const ROUTE_WORKER_MAX_CONCURRENCY = 2;

/** One full vCPU: Lambda gives a function 1 vCPU at 1 769 MB (the solver is single-threaded). */
export const ROUTE_WORKER_MEMORY_MB = 1769;

export class WorkersStack extends Stack {
  readonly webhookWorker: DispatchFunction;
  readonly routeWorker: DispatchFunction;
  /**
   * Where the asynchronous invocations (the S3 trigger, the schedule) land once Lambda has given up on them, and
   * where EventBridge puts a scheduled event it could not deliver: kept 14 days, for an operator to look at.
   */
  readonly asyncFailures: Queue;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const { data } = props;
    const needs = { data, realtime: props.realtime, mailFrom: props.mailFrom };
    this.asyncFailures = new Queue(this, 'AsyncFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: stageOf(this).removalPolicy,
    });
    Validations.of(this.asyncFailures).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: 'This is itself a dead-letter queue: the failure destination of the S3 trigger and the schedule.',
    });
    const onFailure = new SqsDestination(this.asyncFailures);
    this.webhookWorker = new DispatchFunction(this, 'WebhookWorker', {
      handlerPath: 'workers/queue',
      description: 'Work-queue worker: partner webhook deliveries, import runs and planning jobs',
      // An import of 100 000 rows streams two passes over its files; it renews its lease as it goes.
      timeout: WORKER_TIMEOUT,
      memorySize: 1024,
    });
    applyNeeds(this.webhookWorker, background('workers/queue'), needs);

    // Route builds (contract 4.10) in a function of their own: one vCPU (1 769 MB), a search of up to 300 s and the
    // apply after it, one message at a time (ROUTE_WORKER_MAX_CONCURRENCY at once), never holding up the work queue's imports, jobs and deliveries.
    this.routeWorker = new DispatchFunction(this, 'RouteWorker', {
      handlerPath: 'workers/routes',
      description: 'Route-build worker: solves a build in a thread of its own and adds its runsheets',
      timeout: ROUTE_WORKER_TIMEOUT,
      memorySize: ROUTE_WORKER_MEMORY_MB,
      // The solver runs in a worker thread (shared/routing/solve-runner.ts): its own bundle beside the handler's.
      bundling: {
        ...BUNDLING,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            `${inputDir}/node_modules/.bin/esbuild ${inputDir}/shared/routing/solve-thread.ts --bundle --platform=node --format=esm --target=node22 --minify --outfile=${outputDir}/solve-thread.mjs`,
          ],
        },
      },
    });
    applyNeeds(this.routeWorker, background('workers/routes'), needs);
    this.routeWorker.addEventSource(
      new SqsEventSource(data.routeQueue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: ROUTE_WORKER_MAX_CONCURRENCY,
      }),
    );

    // The S3 trigger: records each upload's size and MD5.
    const uploadTrigger = new DispatchFunction(this, 'UploadTrigger', {
      handlerPath: 'workers/uploads',
      description: 'Records the size and MD5 of every object created under uploads/',
      timeout: Duration.minutes(2),
      // S3 invokes it asynchronously: Lambda retries twice, then the event is kept in the failure queue.
      onFailure,
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
      // The next minute's run does the same work again: a failed run is not retried, but kept in the failure queue.
      retryAttempts: 0,
      onFailure,
    });
    applyNeeds(sweep, background('workers/expire-offers'), needs);
    new Rule(this, 'EveryMinute', {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweep, { deadLetterQueue: this.asyncFailures, maxEventAge: Duration.minutes(5) })],
    });

    // Signing-key rotation (docs/key-rotation.md): Secrets Manager invokes the function once per step on the
    // schedule. The L1 schedule, not `addRotationSchedule`: that one also grants the function
    // secretsmanager:GetRandomPassword on * and more than its declared needs; its role comes from applyNeeds alone.
    const rotation = new DispatchFunction(this, 'RotateSigningKeys', {
      handlerPath: 'auth/rotate-signing-keys',
      description:
        'Rotates the token-signing keys: lists a new key, promotes it once every cache holds it, drops the old',
      timeout: Duration.seconds(30),
    });
    applyNeeds(rotation, background('auth/rotate-signing-keys'), needs);
    const invoke = new CfnPermission(this, 'SecretsManagerRotates', {
      action: 'lambda:InvokeFunction',
      functionName: rotation.functionArn,
      principal: 'secretsmanager.amazonaws.com',
      sourceAccount: this.account,
      sourceArn: data.signingKeySecret.secretArn,
    });
    const schedule = new CfnRotationSchedule(this, 'SigningKeyRotation', {
      secretId: data.signingKeySecret.secretArn,
      rotationLambdaArn: rotation.functionArn,
      rotationRules: { automaticallyAfterDays: ROTATION_INTERVAL_DAYS },
      // The first cold start fills the secret: a deploy does not rotate it at once.
      rotateImmediatelyOnUpdate: false,
    });
    schedule.node.addDependency(invoke);

    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'The bucket-notification handler that aws-cdk-lib adds uses the AWS-maintained minimum for its own logs.',
    });
    // The event source mapping polls the queue with the worker's role (receive, delete, change visibility).
    this.webhookWorker.addEventSource(
      new SqsEventSource(data.workQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: WORKER_MAX_CONCURRENCY,
      }),
    );
  }
}
