/**
 * Issue 33 item 10: the expensive and public routes have throttles of their own on both API stages, taken from the
 * route tables and equal to docs/throttling.md's table; reserved concurrency only when asked; and the WAF option
 * (CloudFront with an AWS WAF web ACL) exists with `-c waf=true` only, passing cdk-nag and Guard.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { DispatchFunction } from '../../lib/constructs/dispatch-function.ts';
import { WAF_COUNTED_RULES, WAF_MANAGED_RULES, WAF_RATE_LIMIT_PER_IP } from '../../lib/constructs/edge-firewall.ts';
import { acknowledgeGuardFindings, guardValidator } from '../../lib/guard.ts';
import { STAGE_THROTTLE } from '../../shared/routes/throttles.ts';
import { type RouteDef, routes, websocketRoutes } from '../../shared/routes.ts';

const newApp = (context: Record<string, unknown> = {}) =>
  new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong', ...context },
  });
const ENV = { env: { account: '123456789012', region: 'eu-west-1' } };
type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
const resourcesOf = (stack: Stack) => Template.fromStack(stack).toJSON()['Resources'] as Record<string, Resource>;
const stageOf = (stack: Stack) => Object.values(resourcesOf(stack)).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage')!;

/** docs/throttling.md's table: route id → its route key and figures. */
function documented() {
  const rows = readFileSync('docs/throttling.md', 'utf8')
    .split('\n')
    .filter((line) => /^\| [^ |]+ \| `[^`]+` \| \d+ \| \d+ \| \d+ \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  return new Map(
    rows.map(([, id, key, rate, burst, concurrency]) => [
      id!,
      { key: key!.replaceAll('`', ''), rate: Number(rate), burst: Number(burst), concurrency: Number(concurrency) },
    ]),
  );
}

let built: ReturnType<typeof buildApp>;
beforeAll(() => {
  built = buildApp(newApp(), ENV);
  // Synthesizes the app once (the templates below read that assembly): minutes on a loaded machine.
  Template.fromStack(built.gateway);
}, 900_000);

describe('per-route throttles (issue 33 item 10)', () => {
  it('the documented table names the expensive and public routes of the issue', () => {
    expect([...documented().keys()].sort()).toEqual(
      [
        'A1',
        'T1',
        'X5',
        'X29',
        'L3',
        'L4',
        'P5',
        'X23',
        'X31',
        'X30',
        'I3',
        'I3.ops',
        'I4a',
        'I4b',
        '$connect',
        'subscribe',
      ].sort(),
    );
  });

  it('the HTTP API stage has a route setting per throttled route of the table, with the documented figures', () => {
    const stage = stageOf(built.gateway).Properties;
    expect(stage['DefaultRouteSettings']).toEqual({
      ThrottlingRateLimit: STAGE_THROTTLE.rate,
      ThrottlingBurstLimit: STAGE_THROTTLE.burst,
    });
    const expected = Object.fromEntries(
      [...documented()]
        .filter(([id]) => (routes as readonly RouteDef[]).some((route) => route.id === id))
        .map(([id, row]) => {
          const route = (routes as readonly RouteDef[]).find((r) => r.id === id)!;
          expect(row.key, id).toBe(`${route.method} ${route.path}`);
          return [row.key, { ThrottlingRateLimit: row.rate, ThrottlingBurstLimit: row.burst }];
        }),
    );
    // With X23 and X29 (issues 51 and 52), X30 and X31 (issue 54): 14 throttled HTTP routes.
    expect(Object.keys(expected)).toHaveLength(14);
    expect(stage['RouteSettings']).toEqual(expected);
  });

  it('the HTTP API stage is made after every stack that adds routes (API Gateway refuses settings of a missing route)', () => {
    const after = built.gateway.dependencies.map((stack) => stack.node.id);
    for (const stack of [built.realtime, ...built.areaStacks]) expect(after, stack.node.id).toContain(stack.node.id);
    expect(Object.values(resourcesOf(built.api)).map((r) => r.Type)).not.toContain('AWS::ApiGatewayV2::Stage');
  });

  it('the WebSocket stage throttles $connect and subscribe with the documented figures, after those routes', () => {
    const resources = resourcesOf(built.realtime);
    const stage = stageOf(built.realtime);
    const rows = documented();
    const expected = Object.fromEntries(
      websocketRoutes
        .filter((route) => rows.has(route.routeKey))
        .map((route) => {
          const row = rows.get(route.routeKey)!;
          return [route.routeKey, { ThrottlingRateLimit: row.rate, ThrottlingBurstLimit: row.burst }];
        }),
    );
    expect(Object.keys(expected).sort()).toEqual(['$connect', 'subscribe']);
    expect(stage.Properties['RouteSettings']).toEqual(expected);
    expect(stage.Properties['DefaultRouteSettings']).toEqual({
      ThrottlingRateLimit: STAGE_THROTTLE.rate,
      ThrottlingBurstLimit: STAGE_THROTTLE.burst,
    });
    const routeIds = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Route' && String(r.Properties['RouteKey']) in expected)
      .map(([id]) => id);
    expect(routeIds).toHaveLength(2);
    for (const id of routeIds) expect(stage.DependsOn, id).toContain(id);
  });
});

describe('reserved concurrency', () => {
  /** Handler → reserved concurrency of every DispatchFunction of the app's stacks that has one (no synthesis). */
  const reserved = (app: ReturnType<typeof buildApp>) => {
    const found = new Map<string, number>();
    for (const stack of [app.api, app.realtime, app.workers, ...app.areaStacks]) {
      for (const fn of stack.node.findAll().filter((c): c is DispatchFunction => c instanceof DispatchFunction)) {
        const value = (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions;
        if (value !== undefined) found.set(fn.handlerPath, value);
      }
    }
    return found;
  };

  it('is off by default', () => {
    expect([...reserved(built)]).toEqual([]);
  });

  it('with -c reserveConcurrency=true, the throttled functions reserve the documented figure, and nothing else', () => {
    const found = reserved(buildApp(newApp({ reserveConcurrency: 'true' }), ENV));
    const rows = documented();
    const expected = new Map<string, number>([
      ...(routes as readonly RouteDef[])
        .filter((route) => rows.has(route.id))
        .map((route) => [route.handler, rows.get(route.id)!.concurrency] as const),
      ...websocketRoutes
        .filter((route) => rows.has(route.routeKey))
        .map((route) => [route.handler, rows.get(route.routeKey)!.concurrency] as const),
    ]);
    expect(found).toEqual(expected);
    expect([...expected.values()].reduce((sum, n) => sum + n, 0)).toBe(195);
    expect(() => buildApp(newApp({ reserveConcurrency: 'yes' }), ENV)).toThrow(/reserveConcurrency "yes"/);
  });
});

describe('the WAF option (-c waf=true)', () => {
  it('is absent without the flag', () => {
    expect(built.edge).toBeUndefined();
    const app = built.api.node.root as App;
    for (const stack of app.node.children.filter((c): c is Stack => c instanceof Stack)) {
      const types = Object.values(resourcesOf(stack)).map((r) => r.Type);
      expect(types, stack.node.id).not.toContain('AWS::WAFv2::WebACL');
      expect(types, stack.node.id).not.toContain('AWS::CloudFront::Distribution');
    }
  });

  it('puts CloudFront with a web ACL (rate per IP, AWS managed rules) in front of the HTTP API, in us-east-1, passing cdk-nag and Guard', () => {
    const app = newApp({ waf: 'true' });
    const { edge, gateway } = buildApp(app, ENV);
    // One synthesis for both: the AwsSolutions checks and the Guard rules run on it, the templates below read it.
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), guardValidator());
    acknowledgeGuardFindings(app);
    expect(() => app.synth()).not.toThrow();
    expect(edge!.region).toBe('us-east-1');
    const resources = Object.values(resourcesOf(edge!));
    const acls = resources.filter((r) => r.Type === 'AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    const acl = acls[0]!.Properties as {
      Scope: string;
      Rules: { Name: string; Statement: Record<string, { [k: string]: unknown }>; Action?: unknown }[];
    };
    expect(acl.Scope).toBe('CLOUDFRONT');
    const [rate, ...managed] = acl.Rules;
    expect(rate!.Statement['RateBasedStatement']).toEqual({
      Limit: WAF_RATE_LIMIT_PER_IP,
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 300,
    });
    expect(rate!.Action).toMatchObject({ Block: { CustomResponse: { ResponseCode: 429 } } });
    expect(managed.map((rule) => rule.Statement['ManagedRuleGroupStatement']!['Name'])).toEqual([...WAF_MANAGED_RULES]);
    expect(JSON.stringify(managed[0])).toContain(WAF_COUNTED_RULES[0]);
    const distribution = resources.find((r) => r.Type === 'AWS::CloudFront::Distribution')!;
    const config = distribution.Properties['DistributionConfig'] as Record<string, unknown>;
    expect(config['WebACLId']).toBeDefined();
    expect(JSON.stringify(config['Origins'])).toContain('.execute-api.eu-west-1.amazonaws.com');
    expect(edge!.dependencies.map((stack) => stack.node.id)).toContain(gateway.node.id);
    expect(() => buildApp(newApp({ waf: 'true', wafRateLimit: 'lots' }), ENV)).toThrow(/wafRateLimit "lots"/);
  }, 1_800_000);
});
