/**
 * Issue 25, items 1, 5 and 7, on the synthesized templates: a first deploy into a fresh account works (API Gateway's
 * account role is set before the WebSocket stage with access logs; a deploy must name a sender SES can verify), the
 * queue worker is safe (visibility timeout, bounded concurrency, failure destinations), and storage and logs are
 * bounded (lifecycle rules, an HTTP API access-log format made of HTTP API variables). Every check runs on the templates
 * of the default stage and of `-c stage=prod`.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, requireDeployContext } from '../../lib/app.ts';
import { HTTP_ACCESS_LOG_FORMAT } from '../../lib/stacks/api-stack.ts';
import { RETENTION } from '../../lib/stacks/data-stack.ts';
import { WEBSOCKET_ACCESS_LOG_FORMAT } from '../../lib/stacks/realtime-stack.ts';
import {
  NEW_ACCOUNT_CONCURRENCY,
  ROUTE_WORKER_MAX_CONCURRENCY,
  WORKER_MAX_CONCURRENCY,
} from '../../lib/stacks/workers-stack.ts';

// Bundling is skipped: these tests read templates.
const newApp = (context: Record<string, unknown> = {}) =>
  new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong', ...context },
  });
const ENV = { env: { account: '123456789012', region: 'eu-west-1' } };

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }>;
const resourcesOf = (stack: Stack) => Template.fromStack(stack).toJSON()['Resources'] as Resources;

describe.each([
  ['the default stage', {}],
  ['-c stage=prod', { stage: 'prod' }],
] as const)('%s', (_name, stageContext) => {
  let built: ReturnType<typeof buildApp>;
  beforeAll(() => {
    built = buildApp(newApp(stageContext), ENV);
  });

  describe('a first deploy into a fresh account (issue 25.1)', () => {
    it('sets API Gateway’s CloudWatch role for the account, retained, before the WebSocket stage with access logs', () => {
      const resources = resourcesOf(built.realtime);
      const accounts = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::Account');
      expect(accounts).toHaveLength(1);
      const [accountId, account] = accounts[0]!;
      expect(account).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
      const roleId = (account.Properties['CloudWatchRoleArn'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const role = resources[roleId]!;
      expect(role).toMatchObject({ Type: 'AWS::IAM::Role', DeletionPolicy: 'Retain' });
      expect(JSON.stringify(role.Properties['AssumeRolePolicyDocument'])).toContain('apigateway.amazonaws.com');
      expect(JSON.stringify(role.Properties['ManagedPolicyArns'])).toContain('AmazonAPIGatewayPushToCloudWatchLogs');
      const stages = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
      expect(stages).toHaveLength(1);
      expect(stages[0]!.Properties['AccessLogSettings']).toBeDefined();
      expect(stages[0]!.DependsOn).toContain(accountId);
    });

    it('leaves the account setting alone with -c apiGatewayAccountRole=false', () => {
      const app = newApp({ ...stageContext, apiGatewayAccountRole: 'false' });
      const { realtime } = buildApp(app, ENV);
      Template.fromStack(realtime).resourceCountIs('AWS::ApiGateway::Account', 0);
    });

    it('refuses to synthesize the deployable app without a sender SES can verify', () => {
      expect(() => requireDeployContext(newApp(stageContext))).toThrow(/-c mailFrom=.*docs\/deploy\.md/);
      expect(() => requireDeployContext(newApp({ ...stageContext, mailFrom: 'no-reply@dispatch.example' }))).toThrow(
        /placeholder/,
      );
      expect(() => requireDeployContext(newApp({ ...stageContext, mailFrom: 'not an address' }))).toThrow(/mailFrom/);
      expect(() =>
        requireDeployContext(newApp({ ...stageContext, mailFrom: 'no-reply@mail.example.com' })),
      ).not.toThrow();
      const { areaStacks } = buildApp(newApp({ ...stageContext, mailFrom: 'no-reply@mail.example.com' }), ENV);
      const accounts = areaStacks.find((stack) => stack.node.id === 'DispatchAccounts')!;
      Template.fromStack(accounts).hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ MAIL_FROM: 'no-reply@mail.example.com' }) },
      });
      expect(JSON.stringify(Template.fromStack(accounts).toJSON())).toContain(':identity/mail.example.com');
    });
  });

  describe('the queue worker (issue 25.5)', () => {
    it('hides a received message for at least six times the worker’s timeout, and bounds the worker’s concurrency', () => {
      const workers = resourcesOf(built.workers);
      const mapping = Object.values(workers).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping')!;
      expect(mapping.Properties).toMatchObject({
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: WORKER_MAX_CONCURRENCY },
      });
      const workerId = (mapping.Properties['FunctionName'] as { Ref: string }).Ref;
      const timeout = workers[workerId]!.Properties['Timeout'] as number;
      expect(timeout).toBe(900);
      const queues = Object.values(resourcesOf(built.data)).filter((r) => r.Type === 'AWS::SQS::Queue');
      const workQueue = queues.find((q) => q.Properties['RedrivePolicy'])!;
      expect(workQueue.Properties['VisibilityTimeout']).toBeGreaterThanOrEqual(6 * timeout);
    });

    it('leaves most of a new account’s concurrency to the authorizer and the API (issue 35 item 4)', () => {
      const mappings = Object.values(resourcesOf(built.workers)).filter(
        (r) => r.Type === 'AWS::Lambda::EventSourceMapping',
      );
      const maximum = (mappings[0]!.Properties['ScalingConfig'] as { MaximumConcurrency: number }).MaximumConcurrency;
      // 2 is the least SQS event source mappings accept; 10 (the bound before) was a new account's whole quota.
      expect(maximum).toBe(2);
      expect(NEW_ACCOUNT_CONCURRENCY - maximum).toBeGreaterThanOrEqual(8);
    });

    it('runs route builds one a message, at the concurrency docs/routing.md states (issue 51 item 2)', () => {
      const mappings = Object.values(resourcesOf(built.workers)).filter(
        (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties['BatchSize'] === 1,
      );
      expect(mappings).toHaveLength(1);
      expect(mappings[0]!.Properties['ScalingConfig']).toEqual({ MaximumConcurrency: ROUTE_WORKER_MAX_CONCURRENCY });
      const routing = readFileSync(join(import.meta.dirname, '../../docs/routing.md'), 'utf8');
      expect(routing).toContain(`route worker's concurrency is ${ROUTE_WORKER_MAX_CONCURRENCY}`);
    });

    it('sends the failed asynchronous invocations (S3 trigger, schedule) to a failure queue', () => {
      const workers = resourcesOf(built.workers);
      const failureQueues = Object.entries(workers).filter(
        ([id, r]) => r.Type === 'AWS::SQS::Queue' && /^AsyncFailures/.test(id),
      );
      expect(failureQueues).toHaveLength(1);
      const [queueId] = failureQueues[0]!;
      const configs = Object.values(workers).filter((r) => r.Type === 'AWS::Lambda::EventInvokeConfig');
      const functionsWithDestination = configs.map((config) => {
        expect(JSON.stringify(config.Properties['DestinationConfig'])).toContain(queueId);
        return (config.Properties['FunctionName'] as { Ref: string }).Ref;
      });
      // The S3 trigger and the sweep: the two functions invoked asynchronously.
      const notification = Object.values(workers).find((r) => r.Type === 'Custom::S3BucketNotifications')!;
      const trigger = /"Fn::GetAtt":\["([A-Za-z0-9]+)"/.exec(
        JSON.stringify(notification.Properties['NotificationConfiguration']),
      )![1]!;
      const rule = Object.values(workers).find((r) => r.Type === 'AWS::Events::Rule')!;
      const sweep = /"Fn::GetAtt":\["([A-Za-z0-9]+)"/.exec(JSON.stringify(rule.Properties['Targets']))![1]!;
      expect(functionsWithDestination.sort()).toEqual([trigger, sweep].sort());
      // A scheduled event EventBridge could not deliver lands in the same queue.
      expect(JSON.stringify(rule.Properties['Targets'])).toContain(queueId);
      expect(JSON.stringify(rule.Properties['Targets'])).toContain('DeadLetterConfig');
    });
  });

  describe('bounded storage and useful access logs (issue 25.7)', () => {
    it('expires uploads, results, proofs of delivery, S3 access logs and incomplete multipart uploads', () => {
      const buckets = Object.entries(resourcesOf(built.data)).filter(([, r]) => r.Type === 'AWS::S3::Bucket');
      const uploads = buckets.find(([id]) => id.startsWith('Uploads'))![1];
      const accessLogs = buckets.find(([id]) => id.startsWith('AccessLogs'))![1];
      expect(uploads.Properties['LifecycleConfiguration']).toEqual({
        Rules: [
          { Id: 'ExpireUploads', Prefix: 'uploads/', ExpirationInDays: RETENTION.uploads.toDays(), Status: 'Enabled' },
          { Id: 'ExpireResults', Prefix: 'results/', ExpirationInDays: RETENTION.results.toDays(), Status: 'Enabled' },
          // Issue 38: the proofs drivers upload (X21), under `proofs/<org_id>/`.
          { Id: 'ExpireProofs', Prefix: 'proofs/', ExpirationInDays: RETENTION.proofs.toDays(), Status: 'Enabled' },
          {
            Id: 'AbortIncompleteUploads',
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: RETENTION.incompleteUploads.toDays() },
            Status: 'Enabled',
          },
        ],
      });
      expect(accessLogs.Properties['LifecycleConfiguration']).toEqual({
        Rules: [{ Id: 'ExpireAccessLogs', ExpirationInDays: RETENTION.accessLogs.toDays(), Status: 'Enabled' }],
      });
    });

    it('logs the HTTP API with HTTP API variables (route, integration and authorizer errors, latencies)', () => {
      const stage = Object.values(resourcesOf(built.gateway)).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage')!;
      const format = (stage.Properties['AccessLogSettings'] as { Format: string }).Format;
      const fields = JSON.parse(format) as Record<string, string>;
      for (const variable of [
        '$context.requestId',
        '$context.routeKey',
        '$context.status',
        '$context.integrationErrorMessage',
        '$context.authorizer.error',
        '$context.responseLatency',
        '$context.integrationLatency',
      ]) {
        expect(Object.values(fields), variable).toContain(variable);
      }
      expect(format).not.toContain('$context.resourcePath');
      // The slim lines of test/infra/access-log.test.ts are the ones deployed, on both APIs.
      expect(format).toBe(HTTP_ACCESS_LOG_FORMAT);
      const webSocket = Object.values(resourcesOf(built.realtime)).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage')!;
      expect((webSocket.Properties['AccessLogSettings'] as { Format: string }).Format).toBe(
        WEBSOCKET_ACCESS_LOG_FORMAT,
      );
    });
  });
});
