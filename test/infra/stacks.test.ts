import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { mainTable } from '../../shared/db/tables.ts';
import { type RouteDef, routes, websocketRoutes } from '../../shared/routes.ts';

// Bundling is skipped: these tests read templates, and esbuild for every function would only slow them down.
const newApp = () =>
  new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong' },
  });

let built: ReturnType<typeof buildApp>;
let stacks: Stack[];

beforeAll(() => {
  const app = newApp();
  built = buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
  stacks = app.node.children.filter((child): child is Stack => child instanceof Stack);
});

const templateOf = (stack: Stack) => Template.fromStack(stack);

describe('the synthesized service', () => {
  it('has every route of the table, with the authorizer exactly where the route is not public', () => {
    const apiTemplate = templateOf(built.api);
    const authorizers = apiTemplate.findResources('AWS::ApiGatewayV2::Authorizer');
    expect(Object.keys(authorizers)).toHaveLength(1);
    const found = new Map<string, Record<string, unknown>>();
    for (const stack of built.areaStacks) {
      for (const resource of Object.values(templateOf(stack).findResources('AWS::ApiGatewayV2::Route'))) {
        const props = resource['Properties'] as Record<string, unknown>;
        found.set(String(props['RouteKey']), props);
      }
    }
    for (const route of routes as readonly RouteDef[]) {
      const props = found.get(`${route.method} ${route.path}`);
      expect(props, `${route.id} ${route.method} ${route.path}`).toBeDefined();
      expect(props!['AuthorizationType'], route.id).toBe(route.access === 'public' ? 'NONE' : 'CUSTOM');
      if (route.access !== 'public') expect(props!['AuthorizerId'], route.id).toBeDefined();
    }
    expect(found.size).toBe(routes.length);
  });

  it('answers every other method and path with the problem+json 404 function ($default), not API Gateway’s body', () => {
    const defaults = Object.values(templateOf(built.api).findResources('AWS::ApiGatewayV2::Route')).filter(
      (resource) => (resource['Properties'] as { RouteKey: string }).RouteKey === '$default',
    );
    expect(defaults).toHaveLength(1);
    expect((defaults[0]!['Properties'] as { Target: unknown }).Target).toBeDefined();
  });

  it('keeps every stack under 400 resources', () => {
    for (const stack of stacks) {
      const count = Object.keys(templateOf(stack).toJSON()['Resources'] ?? {}).length;
      expect(count, stack.stackName).toBeLessThan(400);
    }
  });

  it('creates the main table with the same keys and indexes the local host creates', () => {
    templateOf(built.data).hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: mainTable.partitionKey, KeyType: 'HASH' },
        { AttributeName: mainTable.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: mainTable.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      TimeToLiveSpecification: { AttributeName: mainTable.ttlAttribute, Enabled: true },
    });
  });

  it('throttles and logs the API stage, and grants no DynamoDB index wildcard', () => {
    templateOf(built.api).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 },
      AccessLogSettings: { DestinationArn: Match.anyValue() },
    });
    for (const stack of stacks) expect(JSON.stringify(templateOf(stack).toJSON())).not.toContain('/index/*');
  });
});

describe('the accounts area', () => {
  it('may send mail through SES from the configured sender, and only that identity', () => {
    const accounts = built.areaStacks.find((stack) => stack.stackName === 'DispatchAccounts')!;
    const template = templateOf(accounts);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MAIL_FROM: 'no-reply@dispatch.example' }) },
    });
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('ses:SendEmail');
    expect(policies).toContain(':identity/dispatch.example');
    expect(
      JSON.stringify(templateOf(built.areaStacks.find((s) => s.stackName === 'DispatchAuth')!).toJSON()),
    ).not.toContain('ses:SendEmail');
  });
});

describe('webhooks', () => {
  it('the worker alone may decrypt sealed webhook secrets; the tokens area may only encrypt', () => {
    const workers = templateOf(built.workers);
    workers.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const decryptors = stacks.filter((stack) =>
      JSON.stringify(templateOf(stack).findResources('AWS::IAM::Policy')).includes('kms:Decrypt'),
    );
    expect(decryptors.map((stack) => stack.stackName)).toEqual(['DispatchWorkers']);
    const tokens = built.areaStacks.find((stack) => stack.stackName === 'DispatchTokens')!;
    expect(JSON.stringify(templateOf(tokens).findResources('AWS::IAM::Policy'))).toContain('kms:Encrypt');
    templateOf(built.data).hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }),
    });
  });
});

describe('the WebSocket API', () => {
  it('has every WebSocket route of the table, and the connections table expires records', () => {
    const template = templateOf(built.realtime);
    const keys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => (r['Properties'] as { RouteKey: string }).RouteKey,
    );
    expect(keys.filter((k) => !k.startsWith('GET /ops')).sort()).toEqual(websocketRoutes.map((r) => r.routeKey).sort());
    templateOf(built.data).hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
    const notifications = built.areaStacks.find((stack) => stack.stackName === 'DispatchNotifications')!;
    templateOf(notifications).hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          WEBSOCKET_MANAGEMENT_ENDPOINT: Match.anyValue(),
          CONNECTIONS_TABLE: Match.anyValue(),
        }),
      },
    });
  });
});

describe('live positions', () => {
  it('the locations table streams new images into the fan-out function, a second per batch, partial failures reported', () => {
    templateOf(built.data).hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      GlobalSecondaryIndexes: Match.arrayWith([Match.objectLike({ IndexName: 'GeoOrg' })]),
    });
    const realtime = templateOf(built.realtime);
    realtime.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: Match.anyValue(),
      StartingPosition: 'LATEST',
      MaximumBatchingWindowInSeconds: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(Object.keys(realtime.findResources('AWS::Lambda::EventSourceMapping'))).toHaveLength(1);
  });

  it('serves GET /ops and its assets publicly from a function', () => {
    const keys = Object.values(templateOf(built.realtime).findResources('AWS::ApiGatewayV2::Route'))
      .map((r) => r['Properties'] as { RouteKey: string; AuthorizationType?: string })
      .filter((p) => p.RouteKey.startsWith('GET /ops'));
    expect(keys.map((k) => k.RouteKey).sort()).toEqual(['GET /ops', 'GET /ops/assets/{file}']);
    for (const key of keys) expect(key.AuthorizationType ?? 'NONE').toBe('NONE');
  });
});

describe('imports', () => {
  it('an S3 trigger on uploads/ records files, and the worker outlives an import', () => {
    const workers = templateOf(built.workers);
    workers.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          Match.objectLike({
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'uploads/' }] } },
          }),
        ],
      },
    });
    workers.hasResourceProperties('AWS::Lambda::Function', { Timeout: 900, MemorySize: 1024 });
    templateOf(built.data).hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 960 });
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('passes, with every suppression justified in code', () => {
    const app = newApp();
    buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });

  it('really fails on a violation (the check is live)', () => {
    const app = newApp();
    const stack = new Stack(app, 'Bad');
    new Bucket(stack, 'Open');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-S1|AwsSolutions-S10|validation/i);
  });
});
