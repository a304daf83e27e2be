/**
 * The stateful stack: tables (from the same definitions the local host creates), the upload bucket and the
 * secrets, and the stage's alarm topic (here because every other stack depends on this one). Kept apart from the
 * stateless stacks so that those can be replaced freely.
 */
import { Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { type StageConfig, stageOf } from '#lib/stage';
import {
  connectionsTable,
  type IndexDef,
  idempotencyTable,
  locationsTable,
  mainTable,
  projectionOf,
  type TableDef,
} from '#shared/db/tables';

/**
 * How long objects are kept (docs/deploy.md, Retention): uploaded files a quarter (an import runs minutes after its
 * upload; the files stay for questions about it), import results a year (a job's result is read back with the job),
 * S3 access logs a quarter (as the API access logs), and incomplete multipart uploads a day.
 */
export const RETENTION = {
  uploads: Duration.days(90),
  results: Duration.days(365),
  /** Proofs of delivery (X21): a year, as long as a dispute about a delivery is usually raised within. */
  proofs: Duration.days(365),
  accessLogs: Duration.days(90),
  incompleteUploads: Duration.days(1),
} as const;

/** The queue worker's timeout (lib/stacks/workers-stack.ts): the longest an import may run. */
export const WORKER_TIMEOUT = Duration.minutes(15);
/** How long a received work message stays hidden: six times the worker's timeout (AWS's advice for SQS sources). */
export const WORK_VISIBILITY_TIMEOUT = Duration.seconds(6 * WORKER_TIMEOUT.toSeconds());
/**
 * The route-build worker's timeout: a search of at most 300 s (X23's `time_limit_s`), the matrix before it and the
 * apply after it (contract 4.10: within `time_limit_s` + 30 s for 2 000 tasks), with room to spare.
 */
export const ROUTE_WORKER_TIMEOUT = Duration.minutes(10);

export class DataStack extends Stack {
  readonly mainTable: Table;
  readonly idempotencyTable: Table;
  readonly locationsTable: Table;
  readonly connectionsTable: Table;
  readonly uploadBucket: Bucket;
  /** Read any object of the upload bucket (presigned links, downloads, imports). */
  readonly readUploads: ManagedPolicy;
  /** Write uploads (presigned PUTs, multipart uploads). */
  readonly writeUploads: ManagedPolicy;
  /** Write import results. */
  readonly writeResults: ManagedPolicy;
  /** Presigned PUTs of proofs of delivery (X21). */
  readonly writeProofs: ManagedPolicy;
  /** Proofs checked (X20's HeadObject) and shown (X22's presigned GETs). */
  readonly readProofs: ManagedPolicy;
  readonly signingKeySecret: Secret;
  readonly pageTokenSecret: Secret;
  readonly adminPasswordSecret: Secret;
  /** Seals secrets the service must use again (webhook signing secrets): encrypt for the writers, decrypt for the worker. */
  readonly secretBoxKey: Key;
  /** Work for the workers (webhook deliveries), with a dead-letter queue. */
  readonly workQueue: Queue;
  /** Route builds (contract 4.10) for their own worker function, with a dead-letter queue. */
  readonly routeQueue: Queue;
  /**
   * Every alarm of the stage notifies this topic (an e-mail subscription from `-c alarmEmail=…`). It lives here, in
   * the stack every other stack depends on, so that each stack's alarms can name it: in DispatchMonitoring, which
   * depends on the API, realtime and workers stacks, their canary alarms could not (issue 35 item 5).
   */
  readonly alarmTopic: Topic;

  readonly stage: StageConfig;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.stage = stageOf(this);
    const { removalPolicy } = this.stage;
    this.mainTable = this.table(mainTable);
    this.idempotencyTable = this.table(idempotencyTable);
    this.locationsTable = this.table(locationsTable);
    this.connectionsTable = this.table(connectionsTable);

    const accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'ExpireAccessLogs', expiration: RETENTION.accessLogs }],
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions::AwsSolutions-S1',
      reason: 'This is the access-log bucket itself; logging it into itself would loop.',
    });
    this.uploadBucket = new Bucket(this, 'Uploads', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'uploads/',
      removalPolicy: RemovalPolicy.RETAIN,
      cors: [{ allowedMethods: [HttpMethods.PUT], allowedOrigins: ['*'], allowedHeaders: ['*'] }],
      lifecycleRules: [
        { id: 'ExpireUploads', prefix: 'uploads/', expiration: RETENTION.uploads },
        { id: 'ExpireResults', prefix: 'results/', expiration: RETENTION.results },
        { id: 'ExpireProofs', prefix: 'proofs/', expiration: RETENTION.proofs },
        { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: RETENTION.incompleteUploads },
      ],
    });

    this.readUploads = new ManagedPolicy(this, 'ReadUploads', {
      description: 'Read the objects of the upload bucket',
      statements: [
        new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.uploadBucket.arnForObjects('*')] }),
      ],
    });
    Validations.of(this.readUploads).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::<Uploads4F6EB0FD.Arn>/*]',
      reason: 'Object keys are made at upload time; the grant is read-only and limited to this bucket.',
    });

    const writeUnder = (id: string, prefix: string) => {
      const policy = new ManagedPolicy(this, id, {
        description: `Write objects under ${prefix}/ of the upload bucket`,
        statements: [
          new PolicyStatement({
            actions: ['s3:PutObject'],
            resources: [this.uploadBucket.arnForObjects(`${prefix}/*`)],
          }),
        ],
      });
      Validations.of(policy).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::<Uploads4F6EB0FD.Arn>/${prefix}/*]`,
        reason: 'Object keys are made per upload and per job; the grant is limited to this prefix of this bucket.',
      });
      return policy;
    };
    this.writeUploads = writeUnder('WriteUploads', 'uploads');
    this.writeResults = writeUnder('WriteResults', 'results');
    this.writeProofs = writeUnder('WriteProofs', 'proofs');
    this.readProofs = new ManagedPolicy(this, 'ReadProofs', {
      description: 'Read the proofs of delivery (proofs/) of the upload bucket',
      statements: [
        new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.uploadBucket.arnForObjects('proofs/*')] }),
      ],
    });
    Validations.of(this.readProofs).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::<Uploads4F6EB0FD.Arn>/proofs/*]',
      reason: 'Proof keys are made per upload; the grant is read-only and limited to this prefix of this bucket.',
    });

    this.signingKeySecret = new Secret(this, 'SigningKeys', {
      description:
        'ES256 signing keys of the service bearer tokens; filled in by the first cold start, rotated on a schedule.',
      removalPolicy,
    });
    this.pageTokenSecret = new Secret(this, 'PageTokenKey', {
      description: 'Seals list page tokens (AES-256-GCM under an HKDF of this value); only the list functions read it.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy,
    });
    this.adminPasswordSecret = new Secret(this, 'AdminPassword', {
      description: 'Password of the seeded SysAdmin.',
      generateSecretString: { passwordLength: 32, excludePunctuation: true },
      removalPolicy,
    });
    this.secretBoxKey = new Key(this, 'SecretBoxKey', {
      description: 'Seals partner webhook secrets',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const deadLetters = new Queue(this, 'WorkDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    this.workQueue = new Queue(this, 'WorkQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the worker's 15-minute timeout, as AWS asks of an SQS event source: a running import is never
      // handed to a second worker, and a receive whose invocation was throttled or retried keeps its message.
      visibilityTimeout: WORK_VISIBILITY_TIMEOUT,
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
      removalPolicy,
    });
    Validations.of(deadLetters).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: 'This is the dead-letter queue of the work queue.',
    });
    const routeDeadLetters = new Queue(this, 'RouteDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    Validations.of(routeDeadLetters).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: 'This is the dead-letter queue of the route queue.',
    });
    this.routeQueue = new Queue(this, 'RouteQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the route worker's timeout, as for the work queue: a build being solved is never handed out twice.
      visibilityTimeout: Duration.seconds(6 * ROUTE_WORKER_TIMEOUT.toSeconds()),
      deadLetterQueue: { queue: routeDeadLetters, maxReceiveCount: 5 },
      removalPolicy,
    });

    const rotationReasons: [Secret, string][] = [
      [
        this.signingKeySecret,
        'Rotated every 30 days by the SigningKeyRotation schedule of the workers stack (docs/key-rotation.md), which this stack cannot see.',
      ],
      [
        this.pageTokenSecret,
        'Page tokens are short-lived cursors sealed for the caller who listed; rotating the key only breaks paging in progress (docs/key-rotation.md says how to rotate it by hand).',
      ],
      [
        this.adminPasswordSecret,
        'Read only when the seed trigger creates the SysAdmin; rotating it would not change that account’s password.',
      ],
    ];
    for (const [secret, reason] of rotationReasons) {
      Validations.of(secret).acknowledge({ id: 'AwsSolutions::AwsSolutions-SMG4', reason });
    }
    this.alarmTopic = this.alarmTopicOf(this.stage);
  }

  private alarmTopicOf(stage: StageConfig): Topic {
    const topic = new Topic(this, 'AlarmTopic', {
      topicName: `dispatch-alarms-${stage.name}`,
      displayName: `Dispatch ${stage.name} alarms`,
      enforceSSL: true,
    });
    Validations.of(topic).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry alarm names and states only; CloudWatch cannot publish to a topic under the AWS-managed SNS key, and a customer key would cost a key per stage for no secret.',
    });
    const alarmEmail: unknown = this.node.tryGetContext('alarmEmail');
    if (typeof alarmEmail === 'string' && alarmEmail !== '') topic.addSubscription(new EmailSubscription(alarmEmail));
    return topic;
  }

  private table(def: TableDef): Table {
    const attribute = (name: string) => ({ name, type: AttributeType.STRING });
    const warm = def === mainTable ? mainWarmThroughput(this.node.tryGetContext('mainWarmWrites')) : undefined;
    const table = new Table(this, `${def.id}Table`, {
      ...(warm ? { warmThroughput: warm } : {}),
      partitionKey: attribute(def.partitionKey),
      ...(def.sortKey ? { sortKey: attribute(def.sortKey) } : {}),
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: def.ttlAttribute,
      ...(def.stream ? { stream: StreamViewType.NEW_IMAGE } : {}),
      // Retained in every stage (a sandbox's tables are deleted by hand: docs/deploy.md); prod also refuses deletion.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: this.stage.deletionProtection,
    });
    for (const index of def.indexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        ...(index.sortKey ? { sortKey: attribute(index.sortKey) } : {}),
        ...projectionProps(index),
        ...(warm ? { warmThroughput: warm } : {}),
      });
    }
    return table;
  }
}

/**
 * The main table's pre-warmed throughput for a launch (`-c mainWarmWrites=<write units a second>`, docs/scale.md
 * "The cloud's own limits"): a new on-demand table and each of its indexes take 4 000 write units a second at once and
 * double only after a peak, so a first big planning job (5 000 runsheets × 5 candidates: 30 000 items in seconds)
 * would be throttled. Warm throughput lifts that floor for the table and every index (billed once, when set); unset,
 * none. Reads are warmed to three times the writes (DynamoDB's own ratio of a partition's read to write units).
 */
export function mainWarmThroughput(
  value: unknown,
): { writeUnitsPerSecond: number; readUnitsPerSecond: number } | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const writes = Number(value);
  if (!Number.isInteger(writes) || writes < 4000 || writes > 40_000) {
    throw new Error(`mainWarmWrites must be a whole number of write units from 4000 to 40000, not ${String(value)}`);
  }
  return { writeUnitsPerSecond: writes, readUnitsPerSecond: writes * 3 };
}

/** The CDK form of an index's projection (tables.ts decides it for both the cloud and the local host). */
function projectionProps(index: IndexDef): { projectionType: ProjectionType; nonKeyAttributes?: string[] } {
  const projection = projectionOf(index);
  return {
    projectionType: ProjectionType[projection.ProjectionType],
    ...(projection.NonKeyAttributes ? { nonKeyAttributes: projection.NonKeyAttributes } : {}),
  };
}
