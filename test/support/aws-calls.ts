/**
 * Records every AWS call the functions make, under the function that made it: each SDK command (DynamoDB, S3, the
 * WebSocket management API, …) as it is resolved, presigned URLs included, and each local stand-in for a cloud call
 * (shared/local-invocation.ts). A call becomes IAM's action and the resource's ARN as the template names it, with
 * placeholder names (`table/Main`, the bucket `UploadBucket`, …) that test/support/policies.ts uses too.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as smithyEsm from '@smithy/core/client';
import { tables } from '../../shared/db/tables.ts';
import { onStandInCall, runningFunction } from '../../shared/local-invocation.ts';

/** Where each test file leaves its record (cleared by the global setup at the start of a run). */
export const RECORD_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../.test-output/aws-calls');

export const ACCOUNT = '123456789012';
export const REGION = 'eu-west-1';
const arn = (service: string, resource: string) => `arn:aws:${service}:${REGION}:${ACCOUNT}:${resource}`;

/** The placeholder ARN of each named resource, shared with the policy resolver. */
export const PLACEHOLDER = {
  table: (id: string) => arn('dynamodb', `table/${id}`),
  bucket: 'arn:aws:s3:::UploadBucket',
  workQueue: arn('sqs', 'WorkQueue'),
  routeQueue: arn('sqs', 'RouteQueue'),
  deadLetters: arn('sqs', 'WorkDeadLetters'),
  secretBoxKey: arn('kms', 'key/SecretBoxKey'),
  signingKeySecret: arn('secretsmanager', 'secret:SigningKeys'),
  pageTokenSecret: arn('secretsmanager', 'secret:PageTokenKey'),
  adminPasswordSecret: arn('secretsmanager', 'secret:AdminPassword'),
  mailIdentity: arn('ses', 'identity/dispatch.example'),
  webSocketApi: arn('execute-api', 'WebSocketApi'),
} as const;

export interface AwsCall {
  /** Handler module of the calling function (`locations/read-location`); `?` outside any function. */
  fn: string;
  action: string;
  resource: string;
}

type Input = Record<string, unknown>;

/** DynamoDB's table names are the environment's (a per-file prefix); the ARN names the table by its definition. */
function tableArn(name: unknown, index?: unknown): string {
  const def = tables.find((t) => process.env[t.envVar] === name);
  const base = PLACEHOLDER.table(def?.id ?? `unknown:${String(name)}`);
  return index ? `${base}/index/${String(index)}` : base;
}

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Get: 'dynamodb:GetItem',
};

/** IAM's view of one SDK command: transactions and batches are authorised item by item, per table. */
export function iamCalls(
  clientName: string,
  commandName: string,
  input: Input,
): { action: string; resource: string }[] {
  const operation = commandName.replace(/Command$/, '');
  switch (clientName) {
    case 'DynamoDBClient': {
      if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
        return (input['TransactItems'] as Record<string, Input>[]).flatMap((item) =>
          Object.entries(item).map(([kind, body]) => ({
            action: TRANSACT_ACTIONS[kind]!,
            resource: tableArn(body['TableName']),
          })),
        );
      }
      if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
        return Object.keys(input['RequestItems'] as Input).map((name) => ({
          action: `dynamodb:${operation}`,
          resource: tableArn(name),
        }));
      }
      return [{ action: `dynamodb:${operation}`, resource: tableArn(input['TableName'], input['IndexName']) }];
    }
    case 'S3Client': {
      // CopyObject is authorised as PutObject of its key and GetObject of its source (`<bucket>/<key>`).
      if (operation === 'CopyObject') {
        const source = String(input['CopySource']).replace(/^[^/]+\//, '');
        return [
          { action: 's3:PutObject', resource: `${PLACEHOLDER.bucket}/${String(input['Key'])}` },
          { action: 's3:GetObject', resource: `${PLACEHOLDER.bucket}/${source}` },
        ];
      }
      // HeadObject is authorised as GetObject; multipart parts as PutObject.
      const action =
        operation === 'HeadObject'
          ? 's3:GetObject'
          : /^(CreateMultipartUpload|UploadPart|CompleteMultipartUpload)$/.test(operation)
            ? 's3:PutObject'
            : `s3:${operation}`;
      return [{ action, resource: `${PLACEHOLDER.bucket}/${String(input['Key'])}` }];
    }
    case 'ApiGatewayManagementApiClient': {
      const method = operation === 'DeleteConnection' ? 'DELETE' : operation === 'GetConnection' ? 'GET' : 'POST';
      return [
        {
          action: 'execute-api:ManageConnections',
          resource: `${PLACEHOLDER.webSocketApi}/live/${method}/@connections/${String(input['ConnectionId'])}`,
        },
      ];
    }
    case 'SecretsManagerClient':
      return [{ action: `secretsmanager:${operation}`, resource: String(input['SecretId']) }];
    case 'KMSClient':
      return [{ action: `kms:${operation}`, resource: String(input['KeyId']) }];
    case 'SQSClient':
      return [{ action: `sqs:${operation}`, resource: String(input['QueueUrl']) }];
    default:
      return [{ action: `${clientName}:${operation}`, resource: '*' }];
  }
}

const recorded: AwsCall[] = [];
const seen = new Set<string>();
const record = (call: AwsCall) => {
  const key = `${call.fn} ${call.action} ${call.resource}`;
  if (seen.has(key)) return;
  seen.add(key);
  recorded.push(call);
};
let installed = false;

/** Starts recording (once per process); returns the live list of calls. */
export function recordAwsCalls(): AwsCall[] {
  if (installed) return recorded;
  installed = true;
  const require = createRequire(import.meta.url);
  const smithyCjs = require('@smithy/core/client') as typeof smithyEsm;
  for (const Command of new Set([smithyEsm.Command, smithyCjs.Command])) {
    const prototype = Command.prototype as unknown as {
      resolveMiddlewareWithContext: (...args: unknown[]) => unknown;
      input: Input;
    };
    const original = prototype.resolveMiddlewareWithContext;
    prototype.resolveMiddlewareWithContext = function (this: { input: Input }, ...args: unknown[]) {
      const { clientName, commandName } = args[3] as { clientName: string; commandName: string };
      const fn = runningFunction() ?? '?';
      for (const call of iamCalls(clientName, commandName, this.input)) record({ fn, ...call });
      return original.apply(this, args);
    };
  }
  onStandInCall((call) => {
    record({ fn: runningFunction() ?? '?', action: call.action, resource: PLACEHOLDER[call.resource] });
  });
  return recorded;
}
