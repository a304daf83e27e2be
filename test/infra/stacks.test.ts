import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { acknowledgeGuardFindings, GUARD_ACKNOWLEDGEMENTS, guardValidator } from '../../lib/guard.ts';
import { mainTable, projectionOf } from '../../shared/db/tables.ts';
import { POSITIONS_BATCHING_WINDOW_S } from '../../shared/notifications/positions-window.ts';
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
  // Synthesized here, under the hook's bound, not in the first test's 30 s: Template.fromStack reads this assembly.
  app.synth();
});

const templateOf = (stack: Stack) => Template.fromStack(stack);

describe('the synthesized service', () => {
  it('has every route of the table, with the authorizer exactly where the route is not public', () => {
    const apiTemplate = templateOf(built.api);
    const authorizers = apiTemplate.findResources('AWS::ApiGatewayV2::Authorizer');
    expect(Object.keys(authorizers)).toHaveLength(1);
    // Cached per Authorization header; a request without one is API Gateway's own 401 (no function runs).
    const authorizerProps = Object.values(authorizers)[0]!['Properties'] as Record<string, unknown>;
    expect(authorizerProps['IdentitySource']).toEqual(['$request.header.Authorization']);
    expect(authorizerProps['AuthorizerResultTtlInSeconds']).toBe(300);
    expect(authorizerProps['EnableSimpleResponses']).toBe(true);
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
        Projection: projectionOf(index),
      })),
      TimeToLiveSpecification: { AttributeName: mainTable.ttlAttribute, Enabled: true },
    });
  });

  it('throttles and logs the API stage, and grants no DynamoDB index wildcard', () => {
    templateOf(built.gateway).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 },
      AccessLogSettings: { DestinationArn: Match.anyValue() },
    });
    for (const stack of stacks) expect(JSON.stringify(templateOf(stack).toJSON())).not.toContain('/index/*');
  });
});

describe('the accounts area', () => {
  it('may send mail through SES from the configured sender, and only that identity', () => {
    const accounts = built.areaStacks.find((stack) => stack.node.id === 'DispatchAccounts')!;
    const template = templateOf(accounts);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MAIL_FROM: 'no-reply@dispatch.example' }) },
    });
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('ses:SendEmail');
    expect(policies).toContain(':identity/dispatch.example');
    expect(
      JSON.stringify(templateOf(built.areaStacks.find((s) => s.node.id === 'DispatchAuth')!).toJSON()),
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
    expect(decryptors.map((stack) => stack.node.id)).toEqual(['DispatchWorkers']);
    const tokens = built.areaStacks.find((stack) => stack.node.id === 'DispatchTokens')!;
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
    // The console's HTTP routes live in this stack too (/ops, its assets, the recipients' /track/{token}).
    const consoleRoute = (k: string) => k.startsWith('GET /ops') || k === 'GET /track/{token}';
    expect(keys.filter((k) => !consoleRoute(k)).sort()).toEqual(websocketRoutes.map((r) => r.routeKey).sort());
    templateOf(built.data).hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
    const notifications = built.areaStacks.find((stack) => stack.node.id === 'DispatchNotifications')!;
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
  it('the locations table streams new images into the fan-out function, one batching window per batch, partial failures reported', () => {
    templateOf(built.data).hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      GlobalSecondaryIndexes: Match.arrayWith([
        Match.objectLike({ IndexName: 'Geo', Projection: Match.objectLike({ ProjectionType: 'INCLUDE' }) }),
      ]),
    });
    const realtime = templateOf(built.realtime);
    realtime.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: Match.anyValue(),
      StartingPosition: 'LATEST',
      MaximumBatchingWindowInSeconds: POSITIONS_BATCHING_WINDOW_S,
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
    templateOf(built.data).hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 5400 });
  });
});

describe('cdk-nag AwsSolutions and AWS Guard rules (cfn-guard, Control Tower controls)', () => {
  it('pass, with every suppression justified in code', () => {
    const app = newApp();
    buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), guardValidator());
    acknowledgeGuardFindings(app);
    expect(() => app.synth()).not.toThrow();
    for (const reason of Object.values(GUARD_ACKNOWLEDGEMENTS)) expect(reason.length).toBeGreaterThan(20);
  }, 300_000);

  it('Guard really fails on a violation (its binary runs offline)', () => {
    const app = newApp();
    const stack = new Stack(app, 'Bad');
    new Queue(stack, 'NoDeadLetters');
    Validations.of(app).addPlugins(guardValidator());
    expect(() => app.synth()).toThrow(/validation|sqs_dlq_check/i);
  }, 60_000);

  it('really fails on a violation (the check is live)', () => {
    const app = newApp();
    const stack = new Stack(app, 'Bad');
    new Bucket(stack, 'Open');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-S1|AwsSolutions-S10|validation/i);
  });
});

describe('wiring from the template (what the local host does, the cloud does)', () => {
  /** The logical id of the function a property names (`Fn::GetAtt [id, Arn]` or `Ref id`, wherever inside). */
  const functionIn = (value: unknown) => {
    const json = JSON.stringify(value);
    return (/"Fn::GetAtt":\["([A-Za-z0-9]+)"/.exec(json) ?? /"Ref":"([A-Za-z0-9]+)"/.exec(json))?.[1] ?? 'none';
  };
  /** Logical id → handler module of every DispatchFunction of a stack. */
  const handlersOf = (stack: Stack) =>
    new Map(
      stack.node
        .findAll()
        .filter((c): c is DispatchFunction => c instanceof DispatchFunction)
        .map((fn) => [stack.getLogicalId(fn.node.defaultChild as CfnElement), fn.handlerPath]),
    );
  /** The function an integration invokes: through its alias `live` (safe deploys), the alias's function. */
  const targetOf = (template: Template, integrationRef: unknown) => {
    const integrationId = String(integrationRef).replace(/^integrations\//, '');
    const resources = template.toJSON()['Resources'];
    const target = functionIn(resources[integrationId].Properties.IntegrationUri);
    const alias = resources[target];
    expect(alias?.Type, `${integrationId} invokes ${target}, not an alias`).toBe('AWS::Lambda::Alias');
    return functionIn(alias.Properties.FunctionName);
  };

  it('sends every HTTP route to the function of its handler, with the authorizer exactly where the table says', () => {
    const seen = new Set<string>();
    for (const stack of built.areaStacks) {
      const template = templateOf(stack);
      const handlers = handlersOf(stack);
      for (const resource of Object.values(template.findResources('AWS::ApiGatewayV2::Route'))) {
        const props = resource['Properties'] as { RouteKey: string; Target: { 'Fn::Join': [string, unknown[]] } };
        const route = (routes as readonly RouteDef[]).find((r) => `${r.method} ${r.path}` === props.RouteKey)!;
        const ref = (props.Target['Fn::Join'][1][1] as { Ref: string }).Ref;
        expect(handlers.get(targetOf(template, `integrations/${ref}`)), props.RouteKey).toBe(route.handler);
        seen.add(route.id);
      }
    }
    expect(seen.size).toBe(routes.length);
  });

  it('sends protected requests through the authorizer’s alias, and what matches no route to the 404 function', () => {
    const template = templateOf(built.api);
    const handlers = handlersOf(built.api);
    const resources = template.toJSON()['Resources'];
    const [authorizer] = Object.values(template.findResources('AWS::ApiGatewayV2::Authorizer'));
    const aliasId = /"Ref":"([A-Za-z0-9]+)"/.exec(JSON.stringify(authorizer!['Properties'].AuthorizerUri))![1]!;
    expect(resources[aliasId].Type).toBe('AWS::Lambda::Alias');
    expect(handlers.get(functionIn(resources[aliasId].Properties.FunctionName))).toBe('auth/authorizer');
    const fallback = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).find(
      (r) => r['Properties'].RouteKey === '$default',
    )!;
    const ref = (fallback['Properties'].Target['Fn::Join'][1][1] as { Ref: string }).Ref;
    expect(handlers.get(targetOf(template, `integrations/${ref}`))).toBe('system/not-found');
  });

  it('sends every WebSocket route to the function the WebSocket table names (as the local gateway does)', () => {
    const template = templateOf(built.realtime);
    const handlers = handlersOf(built.realtime);
    for (const resource of Object.values(template.findResources('AWS::ApiGatewayV2::Route'))) {
      const props = resource['Properties'] as { RouteKey: string; Target: { 'Fn::Join': [string, unknown[]] } };
      // The stack's HTTP routes (GET /ops) are on the HTTP API; another test covers them.
      if (/^GET \//.test(props.RouteKey)) continue;
      const ref = (props.Target['Fn::Join'][1][1] as { Ref: string }).Ref;
      const expected = websocketRoutes.find((r) => r.routeKey === props.RouteKey)!.handler;
      expect(handlers.get(targetOf(template, `integrations/${ref}`)), props.RouteKey).toBe(expected);
    }
  });

  it('triggers the upload recorder on uploads/, the queue worker from the work queue, the sweep every minute', () => {
    const template = templateOf(built.workers);
    const handlers = handlersOf(built.workers);
    type Props = Record<string, unknown>;
    const resources = template.toJSON()['Resources'] as Record<string, { Type: string; Properties: Props }>;
    // S3: ObjectCreated under uploads/ → workers/uploads (lib/local/s3.ts hands the same events to the same module).
    const notification = Object.values(resources).find((r) => r.Type === 'Custom::S3BucketNotifications')!;
    const [lambda] = (notification.Properties['NotificationConfiguration'] as { LambdaFunctionConfigurations: Props[] })
      .LambdaFunctionConfigurations;
    expect(handlers.get(functionIn(lambda!['LambdaFunctionArn']))).toBe('workers/uploads');
    expect(lambda!['Filter']).toEqual({ Key: { FilterRules: [{ Name: 'prefix', Value: 'uploads/' }] } });
    // SQS: the work queue → workers/queue, ten at a time, failures reported per message (the local queue hands
    // the worker one message at a time: a batch of one, which partial failures make equivalent).
    const mapping = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping')!;
    expect(handlers.get(functionIn(mapping.Properties['FunctionName']))).toBe('workers/queue');
    expect(mapping.Properties).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    // The schedule: every minute → workers/expire-offers (locally every two seconds, so tests need not wait).
    const rule = Object.values(resources).find((r) => r.Type === 'AWS::Events::Rule')!;
    expect(rule.Properties['ScheduleExpression']).toBe('rate(1 minute)');
    expect(handlers.get(functionIn(rule.Properties['Targets']))).toBe('workers/expire-offers');
  });
});
