/**
 * Issue 45 item 4: a launch can pre-warm the main table and its indexes past on-demand's initial 4 000 write units a
 * second (`-c mainWarmWrites=<n>`, docs/scale.md "The cloud's own limits"); without it, nothing is warmed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DataStack, mainWarmThroughput } from '../../lib/stacks/data-stack.ts';
import { mainTable } from '../../shared/db/tables.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };

/** The data stack alone (the others read it, none changes its tables), with `context`. */
function tablesOf(context: Record<string, unknown>) {
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-')),
    context: { 'aws:cdk:bundling-stacks': [], ...context },
  });
  const stack = new DataStack(app, 'DispatchData', { env: { account: '123456789012', region: 'eu-west-1' } });
  const resources = Template.fromStack(stack).toJSON()['Resources'] as Record<string, Resource>;
  return Object.values(resources).filter((r) => r.Type === 'AWS::DynamoDB::Table');
}
const isMain = (table: Resource) =>
  (table.Properties['GlobalSecondaryIndexes'] as { IndexName: string }[] | undefined)?.length ===
  mainTable.indexes.length;

describe('the main table pre-warmed for a launch (issue 45)', () => {
  it('carries warm throughput on the table and every index with -c mainWarmWrites, and on nothing else', () => {
    const tables = tablesOf({ mainWarmWrites: '12000' });
    const main = tables.find(isMain)!;
    const warm = { WriteUnitsPerSecond: 12000, ReadUnitsPerSecond: 36000 };
    expect(main.Properties['WarmThroughput']).toEqual(warm);
    const indexes = main.Properties['GlobalSecondaryIndexes'] as { IndexName: string; WarmThroughput?: unknown }[];
    expect(indexes.map((index) => [index.IndexName, index.WarmThroughput])).toEqual(
      mainTable.indexes.map((index) => [index.name, warm]),
    );
    for (const other of tables.filter((table) => !isMain(table)))
      expect(other.Properties['WarmThroughput']).toBeUndefined();
  });

  it('warms nothing by default, and refuses a figure on-demand would not take', () => {
    for (const table of tablesOf({})) expect(table.Properties['WarmThroughput']).toBeUndefined();
    expect(mainWarmThroughput(undefined)).toBeUndefined();
    expect(() => mainWarmThroughput('3000')).toThrow(/mainWarmWrites/);
    expect(() => mainWarmThroughput('lots')).toThrow(/mainWarmWrites/);
  });
});
