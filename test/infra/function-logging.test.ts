/**
 * Every function's logging (issue 27.4): JSON records, and the platform's START/END/REPORT records of a successful
 * invocation not ingested (system log level WARN, lib/function-logging.ts), which the cost model prices.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.ts';
import { platformRecordsLogged } from '../../lib/function-logging.ts';

let stacks: Stack[];

beforeAll(() => {
  // Bundling skipped, as in stacks.test.ts: only the templates are read.
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:defaultCrossStackReferences': 'strong' },
  });
  buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
  stacks = app.node.children.filter((child): child is Stack => child instanceof Stack);
}, 300_000);

describe('function logging', () => {
  it('logs JSON and no platform record below WARN, in every function of every stack', () => {
    const configs: unknown[] = [];
    for (const stack of stacks) {
      const functions = Template.fromStack(stack).findResources('AWS::Lambda::Function');
      for (const resource of Object.values(functions)) {
        configs.push((resource['Properties'] as Record<string, unknown>)['LoggingConfig']);
      }
    }
    // The service's functions (CDK's own helper functions, if any, have no LoggingConfig and are not counted).
    const ours = configs.filter((config) => config !== undefined);
    expect(ours.length).toBeGreaterThan(100);
    for (const config of ours) expect(config).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN' });
    expect(platformRecordsLogged()).toBe(false);
  }, 300_000);
});
