/**
 * Issue 35 item 6: docs/deploy.md's figures per stack are the synthesized templates' (`npm run figures` rewrites
 * them), and every stack stays below CloudFormation's resource limit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/deploy-aws.ts';
import { figuresTable, STACK_RESOURCE_LIMIT, type StackFigures, stackFigures } from '../../lib/stack-figures.ts';

let figures: StackFigures[];

beforeAll(() => {
  figures = stackFigures();
});

describe('the figures of docs/deploy.md', () => {
  it('are the templates’ own (run npm run figures after a change that adds or removes resources)', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
    expect(page).toContain(figuresTable(figures));
  });

  it('say one number of stacks wherever the page counts them (issue 46.18)', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
    const words: Record<string, number> = { eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15 };
    const counted = [...page.matchAll(/\b(\d+|eleven|twelve|thirteen|fourteen|fifteen) stacks\b/gi)].map(
      ([, n]) => words[n!.toLowerCase()] ?? Number(n),
    );
    expect(counted.length).toBeGreaterThan(0);
    expect(new Set(counted)).toEqual(new Set([figures.length]));
  });

  it('count every stack of a sandbox, each below CloudFormation’s limit', () => {
    expect(figures.map((f) => f.id)).toEqual(
      expect.arrayContaining(['DispatchData', 'DispatchApi', 'DispatchGateway']),
    );
    for (const f of figures) expect(f.resources, f.id).toBeLessThan(STACK_RESOURCE_LIMIT);
    expect(figures.reduce((sum, f) => sum + f.functions, 0)).toBeGreaterThan(100);
  });
});
