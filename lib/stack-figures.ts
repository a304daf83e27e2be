/**
 * The figures docs/deploy.md gives per stack (resources, functions, alarms), counted from the synthesized templates
 * of a sandbox stage (issue 35 item 6): `npm run figures` prints them and writes them into the page between its
 * markers; test/infra/deploy-figures.test.ts fails when the page and the templates disagree, so they cannot go stale.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp } from '#lib/app';

/** CloudFormation's limit of resources per stack. */
export const STACK_RESOURCE_LIMIT = 500;

export interface StackFigures {
  /** The construct id (`DispatchData`). */
  id: string;
  resources: number;
  functions: number;
  alarms: number;
}

/** The markers the figures table sits between in docs/deploy.md. */
export const FIGURES_BEGIN = '<!-- stack figures: npm run figures -->';
export const FIGURES_END = '<!-- end of stack figures -->';

/**
 * Synthesizes a sandbox stage (with an alarm e-mail, as docs/deploy.md deploys it; bundling skipped, which changes
 * no count) and counts each stack's resources, Lambda functions and CloudWatch alarms.
 */
export function stackFigures(): StackFigures[] {
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'cdk-figures-')),
    context: {
      'aws:cdk:bundling-stacks': [],
      '@aws-cdk/core:defaultCrossStackReferences': 'strong',
      stage: 'sandbox',
      alarmEmail: 'oncall@example.com',
    },
  });
  buildApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
  return app.synth().stacks.map((stack) => {
    const types = Object.values((stack.template as { Resources: Record<string, { Type: string }> }).Resources).map(
      (resource) => resource.Type,
    );
    const count = (type: string) => types.filter((t) => t === type).length;
    return {
      id: stack.id,
      resources: types.length,
      functions: count('AWS::Lambda::Function'),
      alarms: count('AWS::CloudWatch::Alarm'),
    };
  });
}

/** The markdown table docs/deploy.md shows, between its markers. */
export function figuresTable(figures: readonly StackFigures[]): string {
  const total = (key: 'resources' | 'functions' | 'alarms') => figures.reduce((sum, f) => sum + f[key], 0);
  return [
    FIGURES_BEGIN,
    '| stack | resources (of 500) | Lambda functions | alarms |',
    '|---|---:|---:|---:|',
    ...figures.map((f) => `| \`${f.id}\` | ${f.resources} | ${f.functions} | ${f.alarms} |`),
    `| all ${figures.length} stacks | ${total('resources')} | ${total('functions')} | ${total('alarms')} |`,
    FIGURES_END,
  ].join('\n');
}

/** `page` with its figures block replaced by `table`; throws when the page has no such block. */
export function withFigures(page: string, table: string): string {
  const begin = page.indexOf(FIGURES_BEGIN);
  const end = page.indexOf(FIGURES_END);
  if (begin < 0 || end < begin) throw new Error(`the page has no "${FIGURES_BEGIN}" … "${FIGURES_END}" block`);
  return page.slice(0, begin) + table + page.slice(end + FIGURES_END.length);
}
