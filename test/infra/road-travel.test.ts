/**
 * Issue 52.5: the road model is chosen per deployment. With `-c travel=amazon-location` the route worker, and no other
 * function, has `TRAVEL_MODEL` and may call `geo-routes:CalculateRouteMatrix` (on AWS's route provider, the only
 * resource the action takes); without it (the default) neither is anywhere in the synthesized templates, and a value
 * that names no model fails the synth.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';

const ENV = { env: { account: '123456789012', region: 'eu-west-1' } };

// Bundling is skipped: these tests read templates.
function synth(context: Record<string, unknown>) {
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong', ...context },
  });
  const built = buildApp(app, ENV);
  const stacks = app.node.children.filter((child): child is Stack => child instanceof Stack);
  const logicalId = (element: unknown) => built.workers.getLogicalId(element as CfnElement);
  const routeWorker = {
    fn: logicalId(built.workers.routeWorker.node.defaultChild),
    role: logicalId(built.workers.routeWorker.role!.node.defaultChild),
  };
  /** Every function that has TRAVEL_MODEL, and every role policy that names the route-matrix action. */
  const found = { variables: [] as string[], grants: [] as { stack: string; roles: unknown; resource: unknown }[] };
  for (const stack of stacks) {
    const template = Template.fromStack(stack).toJSON() as {
      Resources: Record<
        string,
        {
          Type: string;
          Properties?: {
            Environment?: { Variables?: Record<string, unknown> };
            PolicyDocument?: { Statement: Record<string, unknown>[] };
            Roles?: unknown;
          };
        }
      >;
    };
    for (const [id, resource] of Object.entries(template.Resources)) {
      const variables = resource.Properties?.Environment?.Variables;
      if (resource.Type === 'AWS::Lambda::Function' && variables?.['TRAVEL_MODEL'] !== undefined)
        found.variables.push(`${stack.stackName}/${id}=${String(variables['TRAVEL_MODEL'])}`);
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      for (const statement of resource.Properties?.PolicyDocument?.Statement ?? []) {
        const actions = [statement['Action']].flat();
        if (actions.some((action) => String(action).startsWith('geo')))
          found.grants.push({
            stack: stack.stackName,
            roles: resource.Properties?.Roles,
            resource: statement['Resource'],
          });
      }
    }
  }
  return { found, routeWorker, workersStack: built.workers.stackName };
}

let roads: ReturnType<typeof synth>;
let straight: ReturnType<typeof synth>;

// Two whole apps: a synth takes tens of seconds on a busy machine.
beforeAll(() => {
  roads = synth({ travel: 'amazon-location' });
  straight = synth({});
}, 240_000);

describe('the road travel model in the synthesized templates', () => {
  it('with -c travel=amazon-location: the route worker alone has TRAVEL_MODEL and the route-matrix grant', () => {
    const { found, routeWorker, workersStack } = roads;
    expect(found.variables).toEqual([`${workersStack}/${routeWorker.fn}=amazon-location`]);
    expect(found.grants).toEqual([
      {
        stack: workersStack,
        roles: [{ Ref: routeWorker.role }],
        resource: {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':geo-routes:eu-west-1::provider/default']],
        },
      },
    ]);
  });

  it('by default (the straight line): no TRAVEL_MODEL and no Amazon Location grant anywhere', () => {
    const { found } = straight;
    expect(found).toEqual({ variables: [], grants: [] });
  });

  it('refuses a value that names no model', () => {
    expect(() => synth({ travel: 'osrm' })).toThrow(/straight-line, amazon-location/);
  });
});
