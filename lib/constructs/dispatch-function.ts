/**
 * The one Lambda shape of the service: NodejsFunction with the defaults fixed once (Node 24, the newest Lambda runtime, on arm64, ESM bundle,
 * minified with source maps, its own log group). What it may touch and the variables it gets come from its declared
 * needs (lib/constructs/grants.ts), never from here.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { type Alias, Architecture, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { FUNCTION_LOGGING } from '#lib/function-logging';
import { ROOT } from '#lib/paths';
import { stageOf } from '#lib/stage';
import { API_FUNCTION_TIMEOUT_S } from '#shared/functions';

export interface DispatchFunctionProps extends Partial<NodejsFunctionProps> {
  /** Handler module relative to functions/, without extension (as in the route table). */
  handlerPath: string;
}

/** esbuild `--alias` pairs (an absolute path: CDK runs esbuild from the asset's output folder). */
export const JMESPATH_ALIASES = [
  `@aws-lambda-powertools/jmespath/functions=${ROOT}/shared/http/jmespath-fields.ts`,
  `@aws-lambda-powertools/jmespath=${ROOT}/shared/http/jmespath-fields.ts`,
];

export const BUNDLING: NodejsFunctionProps['bundling'] = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  sourceMap: true,
  mainFields: ['module', 'main'],
  // The DynamoDB client is on every hot path, so it is bundled: one file imports in half the time of the runtime's
  // many. What is left out is never loaded on a request: the credential providers past the environment (Lambda
  // hands credentials in environment variables) Secrets Manager (read once per cold start in the cloud), SES (loaded when a mail is sent) S3, KMS, SQS, SNS and the WebSocket management API (loaded on first use), and Amazon Location's routes (the road
  // travel model, loaded on a build's first matrix, only where a deployment turned it on). The
  // Node 24 runtime ships them all, should they be asked for.
  externalModules: [
    '@aws-sdk/client-secrets-manager',
    '@aws-sdk/client-sesv2',
    '@aws-sdk/client-kms',
    '@aws-sdk/client-sqs',
    '@aws-sdk/client-s3',
    '@aws-sdk/client-sns',
    '@aws-sdk/client-apigatewaymanagementapi',
    '@aws-sdk/client-geo-routes',
    '@aws-sdk/nested-clients',
    '@aws-sdk/credential-provider-sso',
    '@aws-sdk/credential-provider-ini',
    '@aws-sdk/credential-provider-process',
    '@aws-sdk/credential-provider-web-identity',
    '@aws-sdk/credential-provider-login',
    '@aws-sdk/token-providers',
    // Container and instance-metadata credentials: Lambda hands credentials in environment variables, so the
    // provider chain stops before these (and the region comes from AWS_REGION, never from instance metadata).
    '@aws-sdk/credential-provider-http',
    '@smithy/credential-provider-imds',
  ],
  esbuildArgs: {
    // Powertools idempotency bundles the whole JMESPath engine to read two plain field names (shared/http/idempotency.ts):
    // shared/http/jmespath-fields.ts answers those as the engine does, 23 kB less in every function that takes POSTs.
    '--alias': JMESPATH_ALIASES,
    // The licence notes of bundled packages stay in node_modules and the lock file, not in each deployed file.
    '--legal-comments': 'none',
  },
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
};

/**
 * What a function published behind `live` carries (lib/constructs/safe-deploy.ts publishes it): the alias its
 * integrations invoke, its deployment group and its error alarm.
 */
export interface LiveFunction {
  readonly alias: Alias;
  readonly errorAlarm: Alarm;
  readonly deploymentGroup: LambdaDeploymentGroup;
}

/** BUNDLING, with files of the repository (`name` → path from the root) copied into the bundle's `folder`. */
export function bundlingWithFiles(
  folder: string,
  files: Record<string, string>,
  /** Run before the copy (e.g. a file to copy that is built first). */
  prepare: () => void = () => {},
): NodejsFunctionProps['bundling'] {
  return {
    ...BUNDLING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) => {
        prepare();
        return [
          `mkdir -p ${outputDir}/${folder}`,
          ...Object.entries(files).map(([name, source]) => `cp ${inputDir}/${source} ${outputDir}/${folder}/${name}`),
        ];
      },
    },
  };
}

export class DispatchFunction extends NodejsFunction {
  /** The handler module (relative to functions/): the function's name in shared/functions.ts and in every record. */
  readonly handlerPath: string;
  /** Its alias `live`, deployment group and error alarm, when it is published for safe deploys (lib/constructs/safe-deploy.ts). */
  live?: LiveFunction;

  constructor(scope: Construct, id: string, props: DispatchFunctionProps) {
    const { handlerPath, environment, ...rest } = props;
    const stage = stageOf(scope);
    // A month in a sandbox, a year in prod; prod keeps the logs of a deleted stack (lib/stage.ts).
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: stage.functionLogRetention,
      removalPolicy: stage.removalPolicy,
    });
    super(scope, id, {
      entry: `${ROOT}/functions/${handlerPath}.ts`,
      projectRoot: ROOT,
      depsLockFilePath: `${ROOT}/package-lock.json`,
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(API_FUNCTION_TIMEOUT_S),
      tracing: Tracing.ACTIVE,
      loggingFormat: LoggingFormat[FUNCTION_LOGGING.format],
      // No START/END/REPORT records for a successful invocation (lib/function-logging.ts).
      systemLogLevelV2: SystemLogLevel[FUNCTION_LOGGING.systemLogLevel],
      logGroup,
      bundling: BUNDLING,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'dispatch',
        ...environment,
      },
      ...rest,
    });
    this.handlerPath = handlerPath;
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        'AWSLambdaBasicExecutionRole only allows writing this function’s own logs; it is the AWS-maintained minimum.',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments/PutTelemetryRecords accept no resource narrower than *.',
    });
  }
}
