/**
 * The cloud assembly as `cdk deploy` would upload it: every function bundled by CDK's own NodejsFunction (esbuild
 * with the stacks' options). Bundling ~120 functions takes most of a minute, so the assembly is kept under
 * node_modules/.cache, keyed by a hash of everything that goes into it, and made again only when that changes.
 * It lives inside the project so that a bundle's imports of the SDK clients the Lambda runtime provides (left
 * external) resolve to the project's copies, as they resolve to the runtime's in Lambda.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildApp } from '../../lib/app.ts';
import { ROOT } from '../../lib/paths.ts';
import { ACCOUNT } from '../support/aws-calls.ts';

const INPUTS = ['functions', 'shared', 'lib', 'bin/app.ts', 'package-lock.json', 'cdk.json'];

function sourceHash(): string {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    const path = join(ROOT, input);
    const files = statSync(path).isDirectory()
      ? readdirSync(path, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => join(entry.parentPath, entry.name))
          .sort()
      : [path];
    for (const file of files) {
      hash.update(file.slice(ROOT.length));
      hash.update(readFileSync(file));
    }
  }
  return hash.digest('hex').slice(0, 16);
}

export const STACK_PROPS = { env: { account: ACCOUNT, region: 'us-east-1' } };
export const CONTEXT = { '@aws-cdk/core:defaultCrossStackReferences': 'strong' };

/** The directory of a synthesized, bundled assembly of the current sources (made if missing). */
export function cloudAssembly(): { outdir: string; reused: boolean } {
  const cache = join(ROOT, 'node_modules', '.cache', 'dispatch-assembly');
  const outdir = join(cache, sourceHash());
  if (existsSync(join(outdir, 'manifest.json'))) return { outdir, reused: true };
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const building = `${outdir}.building-${process.pid}`;
  const app = new App({ outdir: building, context: CONTEXT });
  buildApp(app, STACK_PROPS);
  app.synth();
  renameSync(building, outdir);
  return { outdir, reused: false };
}

/** The same app, built without bundling: only for its construct tree (which function is which handler). */
export function constructTree() {
  const app = new App({
    outdir: join(ROOT, 'node_modules', '.cache', `tree-${process.pid}`),
    context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [] },
  });
  return { app, built: buildApp(app, STACK_PROPS) };
}
