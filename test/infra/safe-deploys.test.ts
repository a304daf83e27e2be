/**
 * Issue 25.3, on the synthesized templates of the default stage and of `-c stage=prod`: every API function (each
 * HTTP route's, the authorizer, the `$default` 404, the WebSocket routes', `/ops`) is published behind the alias
 * `live`; every integration, the authorizer and every API Gateway permission name the alias, never the function;
 * every alias is moved by its own CodeDeploy deployment group, by canary, with that function's error alarm and
 * automatic rollback. `-c deploy=all-at-once` switches a sandbox to one step and is refused for prod.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { ERROR_ALARM, LIVE_ALIAS } from '../../lib/constructs/safe-deploy.ts';
import { REFERENCE_ROUTES } from '../../lib/stacks/api-stack.ts';
import { type RouteDef, routes, websocketRoutes } from '../../shared/routes.ts';

// Bundling is skipped: these tests read templates.
const newApp = (context: Record<string, unknown> = {}) =>
  new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong', ...context },
  });
const ENV = { env: { account: '123456789012', region: 'eu-west-1' } };

type Resource = { Type: string; Properties: Record<string, unknown>; UpdatePolicy?: Record<string, unknown> };
type Resources = Record<string, Resource>;

/** Every logical id a property references (`Ref` or `Fn::GetAtt`), wherever inside. */
const referencesIn = (value: unknown): string[] =>
  [...JSON.stringify(value).matchAll(/"(?:Ref|Fn::GetAtt)":\[?"([A-Za-z0-9]+)"/g)].map((m) => m[1]!);

/**
 * The functions that are no API function: queue, S3 and schedule consumers, the stream consumer, the seed trigger,
 * Secrets Manager's key rotation.
 */
const UNPUBLISHED = [
  'auth/rotate-signing-keys',
  'realtime/positions-stream',
  'system/seed-admin',
  'workers/expire-offers',
  'workers/queue',
  'workers/routes',
  'workers/uploads',
];

function synthesized(context: Record<string, unknown>) {
  const app = newApp(context);
  buildApp(app, ENV);
  const stacks = app.node.children.filter((child): child is Stack => child instanceof Stack);
  return {
    stacks: stacks.map((stack) => ({
      stack,
      resources: Template.fromStack(stack).toJSON()['Resources'] as Resources,
    })),
    functions: app.node.findAll().filter((c): c is DispatchFunction => c instanceof DispatchFunction),
  };
}

const STAGES = [
  ['the default stage', {}],
  ['-c stage=prod', { stage: 'prod' }],
] as const;

describe.each(STAGES)('safe deploys in %s (issue 25.3)', (_name, context) => {
  const { stacks, functions } = synthesized(context);

  it('publishes every API function behind `live`, and only the event consumers and the seed without', () => {
    const published = functions.filter((fn) => fn.live).map((fn) => fn.handlerPath);
    const unpublished = functions.filter((fn) => !fn.live).map((fn) => fn.handlerPath);
    expect(unpublished.sort()).toEqual(UNPUBLISHED);
    for (const handler of [
      ...(routes as readonly RouteDef[]).map((route) => route.handler),
      ...websocketRoutes.map((route) => route.handler),
      'auth/authorizer',
      'system/not-found',
      'system/ops',
    ]) {
      expect(published, handler).toContain(handler);
    }
    for (const { resources } of stacks) {
      const functionIds = new Set(
        Object.entries(resources)
          .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
          .map(([id]) => id),
      );
      for (const [id, alias] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Alias')) {
        expect(alias.Properties['Name'], id).toBe(LIVE_ALIAS);
        const [fnId] = referencesIn(alias.Properties['FunctionName']);
        expect(functionIds.has(fnId!), id).toBe(true);
        // The alias points at a published version of its own function.
        const [versionId] = referencesIn(alias.Properties['FunctionVersion']);
        expect(resources[versionId!]!.Type).toBe('AWS::Lambda::Version');
        expect(referencesIn(resources[versionId!]!.Properties['FunctionName'])).toEqual([fnId]);
      }
    }
    const aliases = stacks.flatMap(({ resources }) =>
      Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Alias'),
    );
    expect(aliases).toHaveLength(published.length);
  });

  it('routes, the WebSocket routes and the authorizer invoke the alias; API Gateway may invoke only the alias', () => {
    let integrations = 0;
    let permissions = 0;
    for (const { stack, resources } of stacks) {
      const isAlias = (id: string) => resources[id]?.Type === 'AWS::Lambda::Alias';
      for (const [id, resource] of Object.entries(resources)) {
        if (resource.Type === 'AWS::ApiGatewayV2::Integration') {
          const targets = referencesIn(resource.Properties['IntegrationUri']);
          expect(targets, `${stack.stackName}/${id}`).toHaveLength(1);
          expect(isAlias(targets[0]!), `${stack.stackName}/${id} invokes ${targets[0]}`).toBe(true);
          integrations++;
        }
        if (resource.Type === 'AWS::ApiGatewayV2::Authorizer') {
          const targets = referencesIn(resource.Properties['AuthorizerUri']);
          expect(targets.filter(isAlias), `${stack.stackName}/${id}`).toHaveLength(1);
          expect(targets.filter((t) => resources[t]?.Type === 'AWS::Lambda::Function')).toEqual([]);
        }
        if (
          resource.Type === 'AWS::Lambda::Permission' &&
          resource.Properties['Principal'] === 'apigateway.amazonaws.com'
        ) {
          const [target] = referencesIn(resource.Properties['FunctionName']);
          expect(isAlias(target!), `${stack.stackName}/${id} permits ${target}`).toBe(true);
          permissions++;
        }
      }
    }
    // Each HTTP route has its integration (the console's routes share one: /ops, its assets and the recipients'
    // /track/{token}; and so do the API reference's), and $default and the WebSocket routes theirs.
    expect(integrations).toBe(routes.length + 1 + 1 + websocketRoutes.length + 1);
    // One permission per HTTP route (the console's three and the reference: one per route), one for $default, one
    // per WebSocket route, the authorizer.
    expect(permissions).toBe(routes.length + 3 + REFERENCE_ROUTES.length + 1 + websocketRoutes.length + 1);
  });

  it('moves every alias by canary through its own deployment group, rolling back on that function’s error alarm', () => {
    let groups = 0;
    for (const { stack, resources } of stacks) {
      const applications = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::CodeDeploy::Application');
      const aliases = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Alias');
      // One CodeDeploy application per stack that has aliases, none elsewhere.
      expect(applications, stack.stackName).toHaveLength(aliases.length > 0 ? 1 : 0);
      for (const [id, alias] of aliases) {
        const update = alias.UpdatePolicy?.['CodeDeployLambdaAliasUpdate'] as Record<string, unknown> | undefined;
        expect(update, `${stack.stackName}/${id} has no CodeDeploy update policy`).toBeDefined();
        expect(referencesIn(update!['ApplicationName'])).toEqual([applications[0]![0]]);
        const [groupId] = referencesIn(update!['DeploymentGroupName']);
        const group = resources[groupId!]!;
        expect(group.Type).toBe('AWS::CodeDeploy::DeploymentGroup');
        expect(group.Properties).toMatchObject({
          DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
          DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
          AlarmConfiguration: { Enabled: true },
        });
        const rollback = group.Properties['AutoRollbackConfiguration'] as { Enabled: boolean; Events: string[] };
        expect(rollback.Enabled).toBe(true);
        expect(rollback.Events).toEqual(expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']));
        // The alarm is this function's: Errors of its alias, per minute, two minutes running.
        const alarms = (group.Properties['AlarmConfiguration'] as { Alarms: { Name: unknown }[] }).Alarms;
        expect(alarms).toHaveLength(1);
        const [alarmId] = referencesIn(alarms[0]!.Name);
        const alarm = resources[alarmId!]!;
        expect(alarm.Type).toBe('AWS::CloudWatch::Alarm');
        expect(alarm.Properties).toMatchObject({
          Namespace: 'AWS/Lambda',
          MetricName: 'Errors',
          Statistic: 'Sum',
          Period: ERROR_ALARM.period.toSeconds(),
          Threshold: ERROR_ALARM.threshold,
          EvaluationPeriods: ERROR_ALARM.evaluationPeriods,
          DatapointsToAlarm: ERROR_ALARM.datapointsToAlarm,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
        const dimensions = alarm.Properties['Dimensions'] as { Name: string; Value: unknown }[];
        const fn = referencesIn(alias.Properties['FunctionName']);
        expect(referencesIn(dimensions.find((d) => d.Name === 'FunctionName')!.Value)).toEqual(fn);
        const resource = dimensions.find((d) => d.Name === 'Resource')!.Value;
        expect(referencesIn(resource)).toEqual(fn);
        expect(JSON.stringify(resource)).toContain(`:${LIVE_ALIAS}`);
        groups++;
      }
    }
    expect(groups).toBe(functions.length - UNPUBLISHED.length);
  });

  it('keeps every stack below CloudFormation’s 500 resources, with one deployment role per stack', () => {
    for (const { stack, resources } of stacks) {
      expect(Object.keys(resources).length, stack.stackName).toBeLessThan(500);
      const codeDeployRoles = Object.values(resources).filter(
        (r) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r.Properties).includes('codedeploy.amazonaws.com'),
      );
      const groups = Object.values(resources).filter((r) => r.Type === 'AWS::CodeDeploy::DeploymentGroup');
      expect(codeDeployRoles, stack.stackName).toHaveLength(groups.length > 0 ? 1 : 0);
    }
  });
});

describe('the deployment style by context', () => {
  const configsOf = (context: Record<string, unknown>) =>
    new Set(
      synthesized(context).stacks.flatMap(({ resources }) =>
        Object.values(resources)
          .filter((r) => r.Type === 'AWS::CodeDeploy::DeploymentGroup')
          .map(
            (r) =>
              `${r.Properties['DeploymentConfigName']} alarms:${JSON.stringify(r.Properties['AlarmConfiguration'])?.includes('"Enabled":true')}`,
          ),
      ),
    );

  it('-c deploy=all-at-once moves a sandbox in one step, still through the alias, its group and its alarm', () => {
    expect([...configsOf({ deploy: 'all-at-once' })]).toEqual(['CodeDeployDefault.LambdaAllAtOnce alarms:true']);
  }, 300_000);

  it('refuses all-at-once for prod, and any style it does not know', () => {
    expect(() => buildApp(newApp({ stage: 'prod', deploy: 'all-at-once' }), ENV)).toThrow(
      /prod always deploys by canary/,
    );
    expect(() => buildApp(newApp({ deploy: 'linear' }), ENV)).toThrow(/canary \(the default\) or all-at-once/);
  });
});
