/**
 * Issue 25.7: every function's bundle, as `cdk deploy` uploads it (the cloud assembly's esbuild output, shared with
 * bundles.test.ts through its cache), stays within the README's 400 KB budget: the code Lambda loads on a cold start.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cloudAssembly } from './assembly.ts';

/** The budget as 400 000 bytes: the stricter reading of 400 KB (`npm run bench` reports KiB). */
const BUDGET_BYTES = 400 * 1000;

describe('bundle sizes (issue 25.7)', () => {
  it('keeps every function bundle within 400 KB', () => {
    const { outdir } = cloudAssembly();
    const bundles = readdirSync(outdir)
      .filter((name) => name.startsWith('asset.'))
      .flatMap((name) =>
        readdirSync(join(outdir, name))
          .filter((file) => file === 'index.mjs')
          .map((file) => ({ asset: name, bytes: statSync(join(outdir, name, file)).size })),
      );
    // About 125 functions, each its own asset (the CDK providers' assets hold no index.mjs).
    expect(bundles.length).toBeGreaterThan(100);
    const over = bundles.filter((bundle) => bundle.bytes > BUDGET_BYTES).map((b) => `${b.asset}: ${b.bytes} bytes`);
    expect(over).toEqual([]);
  }, 600_000);
});
