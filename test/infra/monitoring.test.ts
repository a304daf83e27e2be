/**
 * Issue 25, items 2 (alarms and a dashboard) and 4 (stages), on the synthesized templates of the default stage and
 * of `-c stage=prod`: every stack and every account-unique name carries the stage; prod protects tables and keeps
 * secrets, queues and logs; every alarm the issue lists exists with its documented threshold and notifies the
 * stage's topic; every function has an error and a throttle alarm; the dashboard shows each area's golden signals
 * and the capacity units the functions publish.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { alarmsOf, errorAlarmOf, FUNCTION_ALARMS } from '../../lib/constructs/alarms.ts';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { ERROR_ALARM } from '../../lib/constructs/safe-deploy.ts';
import { ALARMS, SERVICE_METRICS } from '../../lib/stacks/monitoring-stack.ts';
import { DEFAULT_STAGE, stageOf } from '../../lib/stage.ts';
import { type RouteDef, routes } from '../../shared/routes.ts';

const newApp = (context: Record<string, unknown> = {}) =>
  new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong', ...context },
  });
const ENV = { env: { account: '123456789012', region: 'eu-west-1' } };

type Built = ReturnType<typeof buildApp>;
type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
const stacksOf = (built: Built): Stack[] => [
  built.data,
  built.api,
  built.realtime,
  built.workers,
  built.monitoring,
  ...built.areaStacks,
  built.gateway,
];
const templates = new WeakMap<Stack, Record<string, Resource>>();
const resourcesOf = (stack: Stack) => {
  let resources = templates.get(stack);
  if (!resources) {
    resources = Template.fromStack(stack).toJSON()['Resources'] as Record<string, Resource>;
    templates.set(stack, resources);
  }
  return resources;
};
const ofType = (stack: Stack, type: string) => Object.values(resourcesOf(stack)).filter((r) => r.Type === type);
const allOfType = (built: Built, type: string) => stacksOf(built).flatMap((stack) => ofType(stack, type));
const functionsOf = (built: Built) =>
  stacksOf(built).flatMap((stack) => stack.node.findAll().filter((c) => c instanceof DispatchFunction));
/** The metric names an alarm watches, whether it names one metric or a math expression over several. */
const metricNames = (alarm: Resource): string[] => {
  const props = alarm.Properties as {
    MetricName?: string;
    Metrics?: { MetricStat?: { Metric: { MetricName: string } } }[];
  };
  return props.MetricName
    ? [props.MetricName]
    : (props.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
};
const namespaces = (alarm: Resource): string[] => {
  const props = alarm.Properties as {
    Namespace?: string;
    Metrics?: { MetricStat?: { Metric: { Namespace: string } } }[];
  };
  return props.Namespace
    ? [props.Namespace]
    : (props.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.Namespace] : []));
};
/** The alarms of `built.monitoring` watching `metricName` of `namespace`. */
const alarmsOn = (built: Built, namespace: string, metricName: string) =>
  ofType(built.monitoring, 'AWS::CloudWatch::Alarm').filter(
    (alarm) => metricNames(alarm).includes(metricName) && namespaces(alarm).includes(namespace),
  );

const stages: Record<string, Built> = {};
beforeAll(() => {
  stages['sandbox'] = buildApp(newApp({ alarmEmail: 'oncall@example.com' }), ENV);
  stages['prod'] = buildApp(newApp({ stage: 'prod', alarmEmail: 'oncall@example.com' }), ENV);
  // Synthesized here, under the hook's time limit, rather than in the first test that reads them.
  for (const built of Object.values(stages)) for (const stack of stacksOf(built)) resourcesOf(stack);
}, 600_000);

describe('stages (issue 25.4)', () => {
  it('builds the sandbox stage by default and the named stage with -c stage=<name>', () => {
    expect(stages['sandbox']!.stage.name).toBe(DEFAULT_STAGE);
    expect(DEFAULT_STAGE).toBe('sandbox');
    expect(stages['prod']!.stage.name).toBe('prod');
  });

  it('refuses a stage name AWS names could not carry', () => {
    for (const stage of ['Prod', 'my stage', '1st', 'a'.repeat(21), 'x_y']) {
      expect(() => stageOf(newApp({ stage })), stage).toThrow(/stage/);
    }
  });

  it('names every stack apart per stage, so stages share an account', () => {
    const names = (built: Built) => stacksOf(built).map((stack) => stack.stackName);
    for (const [stage, built] of Object.entries(stages)) {
      for (const name of names(built)) expect(name).toMatch(new RegExp(`^Dispatch[A-Za-z]+-${stage}$`));
    }
    const sandbox = new Set(names(stages['sandbox']!));
    expect(names(stages['prod']!).filter((name) => sandbox.has(name))).toEqual([]);
    const other = buildApp(newApp({ stage: 'dev-anna' }), ENV);
    expect(names(other).every((name) => name.endsWith('-dev-anna'))).toBe(true);
  });

  it('puts the stage into every name that must be unique in an account', () => {
    const nameProperties: Record<string, string> = {
      'AWS::DynamoDB::Table': 'TableName',
      'AWS::S3::Bucket': 'BucketName',
      'AWS::Logs::LogGroup': 'LogGroupName',
      'AWS::SecretsManager::Secret': 'Name',
      'AWS::SQS::Queue': 'QueueName',
      'AWS::SNS::Topic': 'TopicName',
      'AWS::CloudWatch::Alarm': 'AlarmName',
      'AWS::CloudWatch::Dashboard': 'DashboardName',
      'AWS::ApiGatewayV2::Api': 'Name',
      'AWS::Lambda::Function': 'FunctionName',
      'AWS::IAM::Role': 'RoleName',
    };
    for (const [stage, built] of Object.entries(stages)) {
      let named = 0;
      for (const [type, property] of Object.entries(nameProperties)) {
        for (const resource of allOfType(built, type)) {
          const name = resource.Properties[property];
          if (name === undefined) continue;
          named += 1;
          expect(JSON.stringify(name), `${type} ${property}`).toContain(stage);
        }
      }
      // The APIs, the topic, the dashboard and every alarm are named.
      expect(named).toBeGreaterThan(2 * functionsOf(built).length);
    }
  });

  it('gives prod tables deletion protection and keeps its secrets, queues and logs; a sandbox can be torn down', () => {
    const prod = stages['prod']!;
    const sandbox = stages['sandbox']!;
    const tables = (built: Built) => ofType(built.data, 'AWS::DynamoDB::Table');
    expect(tables(prod)).toHaveLength(4);
    for (const table of tables(prod)) {
      expect(table.Properties['DeletionProtectionEnabled']).toBe(true);
      expect(table.DeletionPolicy).toBe('Retain');
    }
    for (const table of tables(sandbox)) expect(table.Properties['DeletionProtectionEnabled']).not.toBe(true);

    for (const type of ['AWS::SecretsManager::Secret', 'AWS::SQS::Queue', 'AWS::Logs::LogGroup']) {
      const prodResources = allOfType(prod, type);
      expect(prodResources.length, type).toBeGreaterThan(0);
      for (const resource of prodResources) {
        expect(resource.DeletionPolicy, type).toBe('Retain');
        expect(resource.UpdateReplacePolicy, type).toBe('Retain');
      }
    }
    for (const type of ['AWS::SecretsManager::Secret', 'AWS::SQS::Queue']) {
      for (const resource of allOfType(sandbox, type)) expect(resource.DeletionPolicy, type).toBe('Delete');
    }
  });

  it('keeps prod logs longer: function logs a year (not a month), access logs two years (not three months)', () => {
    const retention = (built: Built) => {
      const days = new Map<string, number>();
      for (const stack of stacksOf(built)) {
        for (const [id, resource] of Object.entries(resourcesOf(stack))) {
          if (resource.Type === 'AWS::Logs::LogGroup') {
            days.set(`${stack.node.id}/${id}`, resource.Properties['RetentionInDays'] as number);
          }
        }
      }
      return days;
    };
    const isAccessLog = (key: string) => key.includes('/AccessLogs');
    const sandbox = retention(stages['sandbox']!);
    const prod = retention(stages['prod']!);
    expect([...prod.keys()].sort()).toEqual([...sandbox.keys()].sort());
    expect([...prod.keys()].filter(isAccessLog)).toHaveLength(2);
    for (const [key, days] of prod) expect(days, key).toBe(isAccessLog(key) ? 731 : 365);
    for (const [key, days] of sandbox) expect(days, key).toBe(isAccessLog(key) ? 90 : 30);
  });
});

describe('alarms (issue 25.2), in both stages', () => {
  for (const stage of ['sandbox', 'prod']) {
    describe(stage, () => {
      const built = () => stages[stage]!;
      // The topic lives in DispatchData, the stack every other one depends on, so that every alarm can name it.
      const topicId = () => {
        const topics = stacksOf(built()).flatMap((stack) =>
          Object.entries(resourcesOf(stack)).filter(([, r]) => r.Type === 'AWS::SNS::Topic'),
        );
        expect(topics).toHaveLength(1);
        expect(Object.keys(resourcesOf(built().data))).toContain(topics[0]![0]);
        return topics[0]![0];
      };

      it('has one alarm topic with the e-mail subscription from -c alarmEmail', () => {
        topicId();
        const subscriptions = ofType(built().data, 'AWS::SNS::Subscription');
        expect(subscriptions).toHaveLength(1);
        expect(subscriptions[0]!.Properties).toMatchObject({ Protocol: 'email', Endpoint: 'oncall@example.com' });
      });

      it('makes every alarm of every stack notify the topic, when it fires and when it recovers', () => {
        const id = topicId();
        let count = 0;
        // Issue 35 item 5: the canary alarms of the API and realtime stacks (the authorizer, the 404 function, the
        // WebSocket routes) notified no one while the topic lived in DispatchMonitoring, which depends on them.
        const aliasedOutsideAreas = functionsOf(built()).filter(
          (fn) => fn.live && !built().areaStacks.includes(Stack.of(fn) as never),
        );
        expect(aliasedOutsideAreas.map((fn) => fn.handlerPath)).toEqual(
          expect.arrayContaining(['auth/authorizer', 'realtime/connect']),
        );
        const silent: string[] = [];
        for (const stack of stacksOf(built())) {
          for (const [logicalId, alarm] of Object.entries(resourcesOf(stack))) {
            if (alarm.Type !== 'AWS::CloudWatch::Alarm') continue;
            count += 1;
            const notifies = ['AlarmActions', 'OKActions'].every((key) => {
              const actions = (alarm.Properties[key] ?? []) as unknown[];
              return actions.some((action) => JSON.stringify(action).includes(id));
            });
            if (!notifies || alarm.Properties['ActionsEnabled'] !== true) silent.push(`${stack.node.id}/${logicalId}`);
          }
        }
        expect(silent).toEqual([]);
        expect(count).toBeGreaterThan(2 * functionsOf(built()).length);
      });

      it('gives every function an error alarm and a throttle alarm, each in the function’s stack', () => {
        const fns = functionsOf(built());
        expect(fns.length).toBeGreaterThan(120);
        for (const fn of fns) {
          const alarms = alarmsOf(fn);
          expect(alarms, fn.node.path).toBeDefined();
          // An area function's error alarm is its canary alarm (Errors of its alias, per minute, two minutes running).
          if (alarms!.errors === fn.live?.errorAlarm) {
            const cfn = alarms!.errors.node.defaultChild as CfnAlarm;
            const resource = resourcesOf(Stack.of(fn))[Stack.of(fn).getLogicalId(cfn)]!;
            expect(resource.Properties).toMatchObject({
              MetricName: 'Errors',
              Threshold: ERROR_ALARM.threshold,
              Period: ERROR_ALARM.period.toSeconds(),
              ComparisonOperator: 'GreaterThanOrEqualToThreshold',
            });
          }
          for (const [alarm, metric, threshold] of [
            ...(alarms!.errors === fn.live?.errorAlarm
              ? []
              : [[alarms!.errors, 'Errors', FUNCTION_ALARMS.maxErrors] as const]),
            [alarms!.throttles, 'Throttles', FUNCTION_ALARMS.maxThrottles] as const,
          ]) {
            const cfn = alarm.node.defaultChild as CfnAlarm;
            const resource = resourcesOf(Stack.of(alarm))[Stack.of(alarm).getLogicalId(cfn)]!;
            expect(metricNames(resource), fn.node.path).toEqual([metric]);
            expect(resource.Properties).toMatchObject({
              Threshold: threshold,
              ComparisonOperator: 'GreaterThanThreshold',
            });
            expect(JSON.stringify(resource.Properties)).toContain(`"Period":${FUNCTION_ALARMS.period.toSeconds()}`);
            expect(JSON.stringify(resource.Properties)).toContain(
              Stack.of(fn).getLogicalId(fn.node.defaultChild as never),
            );
          }
        }
        // The hook a CodeDeploy canary uses: each route function's error alarm, in the route's area stack.
        for (const area of built().areaStacks) {
          for (const fn of area.node.findAll().filter((c) => c instanceof DispatchFunction)) {
            expect(Stack.of(errorAlarmOf(fn))).toBe(area);
          }
        }
      });

      it('alarms on the HTTP API’s 5xx answers and its p99 latency', () => {
        const fivexx = alarmsOn(built(), 'AWS/ApiGateway', '5xx');
        expect(fivexx).toHaveLength(1);
        expect(fivexx[0]!.Properties).toMatchObject({
          Threshold: ALARMS.httpMax5xx,
          ComparisonOperator: 'GreaterThanThreshold',
        });
        const latency = alarmsOn(built(), 'AWS/ApiGateway', 'Latency');
        expect(latency).toHaveLength(1);
        expect(latency[0]!.Properties).toMatchObject({
          Threshold: ALARMS.httpMaxP99.toMilliseconds(),
          EvaluationPeriods: ALARMS.httpP99Periods,
          DatapointsToAlarm: ALARMS.httpP99Periods,
        });
        expect(JSON.stringify(latency[0]!.Properties)).toContain('"Stat":"p99"');
        for (const alarm of [...fivexx, ...latency]) expect(JSON.stringify(alarm.Properties)).toContain('HttpApi');
      });

      it('alarms on dead letters waiting and on the age of the oldest queued work', () => {
        const waiting = alarmsOn(built(), 'AWS/SQS', 'ApproximateNumberOfMessagesVisible');
        // The work queue's dead-letter queue and the asynchronous invocations' failure queue.
        expect(waiting).toHaveLength(2);
        const queues = waiting.map((alarm) => JSON.stringify(alarm.Properties));
        expect(queues.some((q) => q.includes('WorkDeadLetters'))).toBe(true);
        expect(queues.some((q) => q.includes('AsyncFailures'))).toBe(true);
        for (const alarm of waiting) expect(alarm.Properties['Threshold']).toBe(ALARMS.maxDeadLetters);
        const age = alarmsOn(built(), 'AWS/SQS', 'ApproximateAgeOfOldestMessage');
        expect(age).toHaveLength(1);
        expect(age[0]!.Properties['Threshold']).toBe(ALARMS.maxQueuedAge.toSeconds());
        expect(JSON.stringify(age[0]!.Properties)).toContain('WorkQueue');
      });

      it('alarms on each table’s read and write throttles and system errors', () => {
        for (const metric of ['ReadThrottleEvents', 'WriteThrottleEvents', 'SystemErrors']) {
          const alarms = ofType(built().monitoring, 'AWS::CloudWatch::Alarm').filter((alarm) =>
            JSON.stringify(alarm.Properties).includes(`"${metric}"`),
          );
          expect(alarms, metric).toHaveLength(4);
          const tables = new Set(
            alarms.map((alarm) => String(alarm.Properties['AlarmName']).match(/-(\w+)Table-/)?.[1]),
          );
          expect([...tables].sort(), metric).toEqual(['Connections', 'Idempotency', 'Locations', 'Main']);
          const threshold = metric === 'SystemErrors' ? ALARMS.maxTableSystemErrors : ALARMS.maxTableThrottles;
          for (const alarm of alarms) expect(alarm.Properties['Threshold'], metric).toBe(threshold);
        }
      });

      it('alarms on the live positions consumer’s iterator age and on WebSocket integration errors', () => {
        const iterator = alarmsOn(built(), 'AWS/Lambda', 'IteratorAge');
        expect(iterator).toHaveLength(1);
        expect(iterator[0]!.Properties['Threshold']).toBe(ALARMS.maxIteratorAge.toMilliseconds());
        expect(JSON.stringify(iterator[0]!.Properties)).toContain('PositionsStreamFn');
        const integration = alarmsOn(built(), 'AWS/ApiGateway', 'IntegrationError');
        expect(integration).toHaveLength(1);
        expect(integration[0]!.Properties['Threshold']).toBe(ALARMS.webSocketMaxIntegrationErrors);
        expect(JSON.stringify(integration[0]!.Properties)).toContain('WebSocketApi');
      });

      it('shows each area’s golden signals and the capacity units the functions publish on the stage’s dashboard', () => {
        const dashboards = ofType(built().monitoring, 'AWS::CloudWatch::Dashboard');
        expect(dashboards).toHaveLength(1);
        expect(dashboards[0]!.Properties['DashboardName']).toContain(stage);
        // The body is a JSON string inside Fn::Join: unescape its quotes to read it.
        const body = JSON.stringify(dashboards[0]!.Properties['DashboardBody']).replaceAll('\\"', '"');
        for (const metric of ['ServerErrors', 'ClientErrors', 'Latency', 'RCU', 'WCU']) {
          expect(body).toContain(`"${SERVICE_METRICS.namespace}","${metric}"`);
        }
        // Traffic is Latency's SampleCount: the functions publish no `Requests` metric (shared/metrics.ts).
        expect(body).not.toContain(`"${SERVICE_METRICS.namespace}","Requests"`);
        for (const route of routes as readonly RouteDef[]) {
          expect(body, route.id).toMatch(
            new RegExp(`"${SERVICE_METRICS.namespace}","Latency","operation","${route.id}"[^\\]]*"stat":"SampleCount"`),
          );
        }
        for (const route of routes as readonly RouteDef[]) {
          expect(body, route.id).toContain(`"operation","${route.id}"`);
        }
        for (const area of new Set((routes as readonly RouteDef[]).map((route) => route.area))) {
          expect(body).toContain(`Area ${area}`);
        }
      });
    });
  }
});
