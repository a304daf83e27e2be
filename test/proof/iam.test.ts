/**
 * Issue 16.2 and 16.3: the grants suffice, and nothing more is granted. Every other test file (the end-to-end story,
 * every route, the demo's day, the WebSocket, imports through S3, the queue worker, the expiry sweep) recorded each
 * AWS call its functions made, keyed by the function being invoked (test/support/record-setup.ts). Here each call
 * is evaluated against that function's policy as synthesized, by a real IAM policy evaluator
 * (@cloud-copilot/iam-simulate): a call the policy would deny fails. Then the same record reversed: a grant no
 * recorded call uses fails, unless its declaration says why it stays (`unexercised`).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import {
  allFunctions,
  DERIVED_REASONS,
  effectiveNeeds,
  type GrantResource,
  grantsOf,
  READ_ITEMS,
} from '../../shared/functions.ts';
import { ACCOUNT, type AwsCall, PLACEHOLDER, RECORD_DIR } from '../support/aws-calls.ts';
import { asList, type FunctionPolicy, functionPolicies, resourcePolicies } from '../support/policies.ts';

let calls: AwsCall[];
let policies: Map<string, FunctionPolicy>;

beforeAll(() => {
  expect(existsSync(RECORD_DIR), 'no recorded AWS calls: run the whole suite (npm test)').toBe(true);
  const seen = new Set<string>();
  calls = [];
  for (const file of readdirSync(RECORD_DIR)) {
    for (const line of readFileSync(join(RECORD_DIR, file), 'utf8').split('\n')) {
      if (!line || seen.has(line)) continue;
      seen.add(line);
      calls.push(JSON.parse(line) as AwsCall);
    }
  }
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong' },
  });
  const built = buildApp(app, { env: { account: ACCOUNT, region: 'eu-west-1' } });
  policies = new Map(functionPolicies(app, built).map((policy) => [policy.handler, policy]));
});

/** The placeholder ARN pattern of a declared grant's resource (as the recorder names resources). */
function arnPattern(resource: GrantResource): RegExp {
  const exact = (arn: string) => new RegExp(`^${arn.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  switch (resource.kind) {
    case 'table':
      return exact(`${PLACEHOLDER.table(resource.table)}${resource.index ? `/index/${resource.index}` : ''}`);
    case 'objects':
      return new RegExp(`^${PLACEHOLDER.bucket}/${resource.prefix}`);
    case 'workQueue':
      return exact(PLACEHOLDER.workQueue);
    case 'routeQueue':
      return exact(PLACEHOLDER.routeQueue);
    case 'secretBoxKey':
      return exact(PLACEHOLDER.secretBoxKey);
    case 'signingKeySecret':
      return exact(PLACEHOLDER.signingKeySecret);
    case 'pageTokenSecret':
      return exact(PLACEHOLDER.pageTokenSecret);
    case 'adminPasswordSecret':
      return exact(PLACEHOLDER.adminPasswordSecret);
    case 'mailIdentity':
      return exact(PLACEHOLDER.mailIdentity);
    case 'connections':
      return new RegExp(`^${PLACEHOLDER.webSocketApi}/live/`);
    case 'pushApplications':
    case 'pushEndpoints':
      return /^arn:aws:sns:/;
    case 'routeMatrix':
      return /^arn:aws:geo-routes:[\w-]+::provider\/default$/;
  }
}

describe('the IAM proof', () => {
  it('covers every deployed function, and every function that ran is a deployed one', () => {
    expect([...policies.keys()].sort()).toEqual(allFunctions.map((fn) => fn.handler).sort());
    const unknown = [...new Set(calls.map((call) => call.fn))].filter((fn) => !policies.has(fn));
    expect(unknown).toEqual([]);
  });

  it('allows every AWS call a function made, by its policy as synthesized (16.2)', async () => {
    expect(calls.length).toBeGreaterThan(0);
    const denied: string[] = [];
    for (const call of calls) {
      const policy = policies.get(call.fn)!;
      const result = await runSimulation(
        {
          request: {
            principal: `arn:aws:iam::${ACCOUNT}:role/${call.fn.replace(/\W/g, '-')}`,
            action: call.action,
            resource: { resource: call.resource, accountId: ACCOUNT },
            contextVariables: {},
          },
          identityPolicies: [{ name: 'role', policy: { Version: '2012-10-17', Statement: policy.statements } }],
          ...(resourcePolicies.has(call.resource) ? { resourcePolicy: resourcePolicies.get(call.resource) } : {}),
          serviceControlPolicies: [],
          resourceControlPolicies: [],
        },
        {},
      );
      const verdict = result.resultType === 'error' ? `error ${JSON.stringify(result.errors)}` : result.overallResult;
      if (verdict !== 'Allowed') denied.push(`${call.fn}: ${call.action} on ${call.resource} → ${verdict}`);
    }
    expect(denied).toEqual([]);
  });

  it('uses every grant, or the declaration says why it stays (16.3)', () => {
    const unused: string[] = [];
    const staleReasons: string[] = [];
    const exercised = new Set<string>();
    for (const fn of allFunctions) {
      const made = calls.filter((call) => call.fn === fn.handler);
      const reasons = effectiveNeeds(fn).unexercised ?? {};
      const names = new Set<string>();
      for (const grant of grantsOf(fn)) {
        names.add(grant.name);
        const pattern = arnPattern(grant.resource);
        const used = made.some((call) => grant.actions.includes(call.action) && pattern.test(call.resource));
        // Every authenticated function reads the main table in the handler kit (the token generation), so a reason
        // for an unexercised write grant goes stale only when something was written with it.
        const writes = grant.actions.filter((action) => !(READ_ITEMS as readonly string[]).includes(action));
        const wrote = made.some((call) => writes.includes(call.action) && pattern.test(call.resource));
        if (!used && !reasons[grant.name]) unused.push(`${fn.label} (${fn.handler}): ${grant.name}`);
        if (used) exercised.add(grant.name);
        const derived = grant.name in DERIVED_REASONS;
        const exercisedAfterAll = grant.name.endsWith(':write') ? wrote : used;
        // A reason that begins "Timing:" names a path the tests reach in some runs and not others.
        const timing = reasons[grant.name]?.startsWith('Timing:') === true;
        if (exercisedAfterAll && reasons[grant.name] && !derived && !timing) {
          staleReasons.push(`${fn.label}: ${grant.name} is exercised after all`);
        }
      }
      for (const name of Object.keys(reasons)) {
        if (!names.has(name)) staleReasons.push(`${fn.label}: no grant named ${name}`);
      }
    }
    expect(unused).toEqual([]);
    expect(staleReasons).toEqual([]);
    // A derived grant stands for one shared code path: some function must exercise it. Push, road travel and the
    // first fill of the signing-key secret make no AWS call locally (their reasons say so); the bundle run, the
    // adapter's unit test and an account show them.
    const derivedUnexercised = Object.keys(DERIVED_REASONS).filter(
      (name) =>
        !exercised.has(name) && !name.startsWith('push:') && name !== 'signingKey:fill' && name !== 'roadTravel:matrix',
    );
    expect(derivedUnexercised).toEqual([]);
  });

  it('grants nothing the declarations do not (every synthesized statement is a declared grant)', () => {
    const extra: string[] = [];
    for (const fn of allFunctions) {
      const declared = grantsOf(fn);
      for (const statement of policies.get(fn.handler)!.statements) {
        for (const action of asList(statement.Action)) {
          // X-Ray tracing (DispatchFunction), and the event source mappings, which poll the queues (the queue worker,
          // the route-build worker)
          // and read the locations stream (live positions) with the function's role: CDK adds these, and none is a
          // call the service's code makes.
          if (action.startsWith('xray:')) continue;
          if (
            fn.handler === 'realtime/positions-stream' &&
            /^dynamodb:(DescribeStream|GetRecords|GetShardIterator|ListStreams)$/.test(action)
          ) {
            continue;
          }
          // The failure destination of the asynchronous invocations (S3 trigger, schedule): Lambda itself sends
          // the failed event there with the function's role; the code makes no such call.
          if (
            (fn.handler === 'workers/uploads' || fn.handler === 'workers/expire-offers') &&
            /^sqs:(SendMessage|GetQueue)/.test(action) &&
            asList(statement.Resource).every((resource) => /DispatchWorkers(-[\w-]+)?\/AsyncFailures/.test(resource))
          ) {
            continue;
          }
          if (
            (fn.handler === 'workers/queue' || fn.handler === 'workers/routes') &&
            /^sqs:(Receive|ChangeMessageVisibility|GetQueue|DeleteMessage)/.test(action)
          ) {
            continue;
          }
          for (const resource of asList(statement.Resource)) {
            const ok = declared.some((grant) => {
              if (!grant.actions.includes(action)) return false;
              const pattern = arnPattern(grant.resource);
              return pattern.test(resource) || pattern.test(resource.replace(/\*$/, ''));
            });
            if (!ok) extra.push(`${fn.handler}: ${action} on ${resource}`);
          }
        }
      }
    }
    expect(extra).toEqual([]);
  });
});
