/**
 * Every function bundled as CDK bundles it (same esbuild options), then: its size, and the median time to import it
 * in a fresh Node process (the cold-start share that is ours).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLING, JMESPATH_ALIASES } from '#lib/constructs/dispatch-function';
import { ROOT } from '#lib/paths';
import { type RouteDef, routes } from '#shared/routes';

const OUT = join(ROOT, '.bench', 'bundles');
const RUNS = 11;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchBundles(): Promise<{ maxKb: number; maxImportMs: number }> {
  rmSync(OUT, { recursive: true, force: true });
  const handlers = [
    ...new Set([
      ...(routes as readonly RouteDef[]).map((r) => r.handler),
      'auth/authorizer',
      'system/seed-admin',
      'system/not-found',
      'system/ops',
      'realtime/positions-stream',
    ]),
  ];
  console.log(
    `\n## Function bundles (${handlers.length}, esbuild as CDK runs it; import = median of ${RUNS} fresh processes)`,
  );
  // This VM's speed drifts over a day (the same bundle has imported in 37 ms and in 53 ms hours apart): a fixed
  // CPU workload, timed first, says how fast the machine was when these figures were taken.
  const calibration = performance.now();
  createHash('sha256')
    .update(Buffer.alloc(256 * 2 ** 20, 7))
    .digest();
  console.log(`(calibration: SHA-256 of 256 MiB took ${(performance.now() - calibration).toFixed(0)} ms)`);
  console.log('handler                     size KB   import ms');
  const built: { handler: string; outfile: string; kb: number; times: number[] }[] = [];
  for (const handler of handlers) {
    const outdir = join(OUT, handler.replace('/', '-'));
    mkdirSync(outdir, { recursive: true });
    const outfile = join(outdir, 'index.mjs');
    await build({
      entryPoints: [join(ROOT, 'functions', `${handler}.ts`)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: BUNDLING!.target,
      minify: true,
      sourcemap: false,
      mainFields: BUNDLING!.mainFields,
      external: BUNDLING!.externalModules,
      banner: { js: BUNDLING!.banner! },
      alias: Object.fromEntries(JMESPATH_ALIASES.map((pair) => pair.split('=') as [string, string])),
      legalComments: 'none',
      logLevel: 'error',
    });
    built.push({ handler, outfile, kb: statSync(outfile).size / 1024, times: [] });
  }
  // Round-robin: each bundle's runs are spread over the whole measurement, so a burst of noise on this shared
  // machine lands on one run of many bundles (the median drops it) rather than on every run of one bundle.
  for (let i = 0; i < RUNS; i++) {
    for (const bundle of built) {
      const script = `const t=performance.now();await import(${JSON.stringify(bundle.outfile)});process.stdout.write(String(performance.now()-t));`;
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, AWS_REGION: 'eu-west-1', MAIN_TABLE: 'x', IDEMPOTENCY_TABLE: 'y', LOG_LEVEL: 'SILENT' },
      });
      bundle.times.push(Number(out.toString()));
    }
  }
  let maxKb = 0;
  let maxImportMs = 0;
  for (const { handler, kb, times } of built) {
    const ms = median(times);
    maxKb = Math.max(maxKb, kb);
    maxImportMs = Math.max(maxImportMs, ms);
    console.log(`${handler.padEnd(26)} ${kb.toFixed(1).padStart(8)} ${ms.toFixed(1).padStart(11)}`);
  }
  console.log(
    `largest bundle ${maxKb.toFixed(1)} KB (budget 400 KB, ratio ${(maxKb / 400).toFixed(2)}); slowest import ${maxImportMs.toFixed(1)} ms (budget 60 ms, ratio ${(maxImportMs / 60).toFixed(2)})`,
  );
  return { maxKb, maxImportMs };
}
